"""ibprov: provision and accept InfiniBand fabrics from one declarative cluster.yaml."""

__version__ = "0.1.0"
