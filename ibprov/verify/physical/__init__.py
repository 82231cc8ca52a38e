"""verify --physical: bit error rates, cables and optics, PCIe links and GPU locality against the plan."""
