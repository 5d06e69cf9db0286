package server

import (
	"log/slog"

	"github.com/quotad/quotad/internal/audit"
)

// newAuditor builds the audit trail from the --audit-* flags: the policy (a file that
// does not parse or validate is an error) and the log backend. As kube-apiserver, a log
// path without a policy records nothing (the file is created, empty), and so does a
// policy without a log path.
func newAuditor(cfg Config, log *slog.Logger) (*audit.Auditor, *audit.Backend, error) {
	mode, err := audit.ParseMode(cfg.AuditLogMode)
	if err != nil {
		return nil, nil, err
	}
	var checker *audit.Checker
	if cfg.AuditPolicyFile != "" {
		p, err := audit.LoadPolicyFile(cfg.AuditPolicyFile)
		if err != nil {
			return nil, nil, err
		}
		checker = audit.NewChecker(p)
	}
	if cfg.AuditLogPath == "" {
		return nil, nil, nil
	}
	w, err := audit.OpenLog(audit.LogOptions{
		Path: cfg.AuditLogPath, MaxAge: cfg.AuditLogMaxAge, MaxBackups: cfg.AuditLogMaxBackup,
		MaxSize: cfg.AuditLogMaxSize, Compress: cfg.AuditLogCompress,
	})
	if err != nil {
		return nil, nil, err
	}
	if checker == nil {
		// As kube-apiserver: the log file is made, and nothing is written to it.
		log.Info("No audit policy file provided, no events will be recorded for log backend")
		return nil, nil, w.Close()
	}
	b := audit.NewBackend(w, mode, cfg.AuditLogBatchBufferSize, log)
	return audit.NewAuditor(checker, b), b, nil
}
