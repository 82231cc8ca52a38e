"""``verify --mpi``: does MPI (UCX / Open MPI) and NCCL use the fabric, or would it fall back to TCP?"""
