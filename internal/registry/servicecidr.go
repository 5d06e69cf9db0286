package registry

// DefaultServiceCIDR returns the range cluster IPs are allocated from ("10.96.0.0/12"),
// which the default ServiceCIDR named "kubernetes" holds.
func DefaultServiceCIDR() string { return serviceCIDR.String() }
