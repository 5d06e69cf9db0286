package cluster

// The tests drive a quotad binary built from these packages: importing them makes go test's
// result cache rerun the tests whenever any of them changes.
import _ "github.com/quotad/quotad/internal/server"
