package server

import (
	"context"
	"log/slog"

	"github.com/quotad/quotad/internal/controller/flowcontrol"
	"github.com/quotad/quotad/internal/registry"
)

// bootstrapFlowControl creates upstream's mandatory FlowSchemas and
// PriorityLevelConfigurations (exempt, catch-all) before the server serves, as
// kube-apiserver does; the flowcontrol controller keeps them afterwards.
func bootstrapFlowControl(ctx context.Context, store *registry.Store, log *slog.Logger) error {
	return flowcontrol.New(store, log, nil).Sync(ctx)
}
