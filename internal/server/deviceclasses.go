package server

import (
	"context"
	"fmt"

	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/quotad/quotad/internal/registry"
)

// deviceClassesGVR is where DRA device classes are served.
var deviceClassesGVR = resourcev1.SchemeGroupVersion.WithResource("deviceclasses")

// deviceClasses is the claim evaluator's read access to DRA device classes (upstream's
// DeviceClass informer): a running server's watch-fed cache once it exists, storage before
// that (or when there is no cache, as in CheckingStore).
type deviceClasses struct {
	cached **cachedReader
	store  **registry.Store
}

// DeviceClasses lists every DeviceClass.
func (d deviceClasses) DeviceClasses() ([]*resourcev1.DeviceClass, error) {
	ctx := context.Background()
	var (
		objs []runtime.Object
		err  error
	)
	switch {
	case d.cached != nil && *d.cached != nil:
		objs, err = (*d.cached).List(ctx, deviceClassesGVR, "")
	case d.store != nil && *d.store != nil:
		objs, err = storeReader{*d.store}.List(ctx, deviceClassesGVR, "")
	default:
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	out := make([]*resourcev1.DeviceClass, 0, len(objs))
	for _, o := range objs {
		c, ok := o.(*resourcev1.DeviceClass)
		if !ok {
			return nil, fmt.Errorf("expect *v1.DeviceClass, got %T", o)
		}
		out = append(out, c)
	}
	return out, nil
}
