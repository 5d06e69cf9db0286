package admission

import "context"

type warningsKey struct{}

// WithWarnings returns ctx carrying add, which receives every warning admission gives the
// request's client (the HTTP edge turns each into a Warning header, as upstream's
// warning.AddWarning does).
func WithWarnings(ctx context.Context, add func(msg string)) context.Context {
	return context.WithValue(ctx, warningsKey{}, add)
}

// Warn gives the request's client a warning; it does nothing when ctx carries no sink (a
// write of an in-process controller).
func Warn(ctx context.Context, msg string) {
	if add, ok := ctx.Value(warningsKey{}).(func(string)); ok && add != nil {
		add(msg)
	}
}

// WarningsWanted reports whether ctx carries a warning sink: a client's request, whose
// warnings are worth computing.
func WarningsWanted(ctx context.Context) bool {
	add, ok := ctx.Value(warningsKey{}).(func(string))
	return ok && add != nil
}

type auditKey struct{}

// WithAuditAnnotations returns ctx carrying add, which receives every audit annotation
// admission adds to the request's audit event (as upstream's admission attributes'
// AddAnnotation; the HTTP edge records them with audit.Annotate).
func WithAuditAnnotations(ctx context.Context, add func(key, value string)) context.Context {
	return context.WithValue(ctx, auditKey{}, add)
}

// AuditAnnotate adds an annotation to the request's audit event; it does nothing when ctx
// carries no sink (a write of an in-process controller, or a request not audited).
func AuditAnnotate(ctx context.Context, key, value string) {
	if add, ok := ctx.Value(auditKey{}).(func(string, string)); ok && add != nil {
		add(key, value)
	}
}
