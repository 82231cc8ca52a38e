"""The cluster's identity: the GUID of every device the spec names, from the spec, from the lock file
`ibprov discover` writes, or (the twin only) synthetic. Imports only the cluster spec."""
