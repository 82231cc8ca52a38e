from ibprov.cli import main

main()
