package server

import (
	"context"
	"log/slog"

	"github.com/quotad/quotad/internal/admission"
	"github.com/quotad/quotad/internal/admission/certificates"
	"github.com/quotad/quotad/internal/admission/rbacescalation"
	"github.com/quotad/quotad/internal/controller/apiservices"
	"github.com/quotad/quotad/internal/controller/flowcontrol"
	"github.com/quotad/quotad/internal/registry"
)

// bootstrapFlowControl creates, before the server serves as kube-apiserver does, upstream's
// mandatory FlowSchemas and PriorityLevelConfigurations (exempt, catch-all) and the local
// APIService of every served group-version; their controllers keep them afterwards.
func bootstrapFlowControl(ctx context.Context, store *registry.Store, log *slog.Logger) error {
	if err := flowcontrol.New(store, log, nil).Sync(ctx); err != nil {
		return err
	}
	return apiservices.New(store, log, nil).Sync(ctx)
}

// certAdmission adds upstream's CertificateApproval and CertificateSigning checks after the
// admission chain, and the "sign" check of PodCertificateRequest status writes (upstream's
// validation) before it; they ask the same rule resolver as RBAC escalation prevention.
type certAdmission struct {
	registry.Admission
	escalation *rbacescalation.Checker
}

func (a certAdmission) Validate(ctx context.Context, attrs *admission.Attributes) error {
	c := &certificates.Checker{Resolver: a.escalation.Resolver}
	// A PodCertificateRequest's signer check is upstream's validation, before the chain.
	if err := c.ValidatePodCertificateRequestStatus(ctx, attrs); err != nil {
		return err
	}
	if err := a.Admission.Validate(ctx, attrs); err != nil {
		return err
	}
	return c.Validate(ctx, attrs)
}
