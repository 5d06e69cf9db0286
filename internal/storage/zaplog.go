package storage

import (
	"context"
	"log/slog"
	"slices"
	"sync/atomic"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// newZapLogger returns a zap logger (etcd's logging library) that writes every entry at or
// above minLevel to logger, so etcd's logs share quotad's handler and format. While
// stopping is set (it may be nil), every entry is logged at debug level: etcd reports its
// own orderly shutdown ("server closed", "use of closed network connection") as errors.
func newZapLogger(logger *slog.Logger, minLevel slog.Level, stopping *atomic.Bool) *zap.Logger {
	return zap.New(&slogCore{handler: logger.Handler(), min: minLevel, stopping: stopping})
}

// slogCore is a zapcore.Core forwarding to a slog.Handler.
type slogCore struct {
	handler  slog.Handler
	min      slog.Level
	stopping *atomic.Bool
	// attrs are the fields added with With, already converted.
	attrs []slog.Attr
}

// level is the slog level an entry at l is logged at.
func (c *slogCore) level(l zapcore.Level) slog.Level {
	if c.stopping != nil && c.stopping.Load() {
		return slog.LevelDebug
	}
	return slogLevel(l)
}

func (c *slogCore) Enabled(l zapcore.Level) bool {
	lvl := c.level(l)
	return lvl >= c.min && c.handler.Enabled(context.Background(), lvl)
}

func (c *slogCore) With(fields []zapcore.Field) zapcore.Core {
	return &slogCore{handler: c.handler, min: c.min, stopping: c.stopping, attrs: append(slices.Clip(c.attrs), fieldAttrs(fields)...)}
}

func (c *slogCore) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if c.Enabled(e.Level) {
		return ce.AddCore(e, c)
	}
	return ce
}

func (c *slogCore) Write(e zapcore.Entry, fields []zapcore.Field) error {
	r := slog.NewRecord(e.Time, c.level(e.Level), e.Message, 0)
	r.AddAttrs(slog.String("component", "etcd"))
	if e.LoggerName != "" {
		r.AddAttrs(slog.String("logger", e.LoggerName))
	}
	r.AddAttrs(c.attrs...)
	r.AddAttrs(fieldAttrs(fields)...)
	return c.handler.Handle(context.Background(), r)
}

func (c *slogCore) Sync() error { return nil }

// fieldAttrs converts zap fields to slog attributes in key order.
func fieldAttrs(fields []zapcore.Field) []slog.Attr {
	if len(fields) == 0 {
		return nil
	}
	enc := zapcore.NewMapObjectEncoder()
	for _, f := range fields {
		f.AddTo(enc)
	}
	keys := make([]string, 0, len(enc.Fields))
	for k := range enc.Fields {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	attrs := make([]slog.Attr, 0, len(keys))
	for _, k := range keys {
		attrs = append(attrs, slog.Any(k, enc.Fields[k]))
	}
	return attrs
}

func slogLevel(l zapcore.Level) slog.Level {
	switch {
	case l <= zapcore.DebugLevel:
		return slog.LevelDebug
	case l == zapcore.InfoLevel:
		return slog.LevelInfo
	case l == zapcore.WarnLevel:
		return slog.LevelWarn
	default:
		return slog.LevelError
	}
}
