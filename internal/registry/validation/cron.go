package validation

import (
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// CronSchedule is a parsed CronJob schedule: github.com/robfig/cron/v3's ParseStandard,
// which upstream uses both to validate schedules and in its CronJob controller (five
// fields, month and day names, ranges, steps and lists, "*" and "?", the @yearly…
// descriptors, @every <duration>, and a TZ= or CRON_TZ= prefix).
type CronSchedule struct {
	s cron.Schedule
}

// ParseCron parses a schedule; its errors are robfig/cron's texts, which upstream puts in
// its validation messages.
func ParseCron(spec string) (*CronSchedule, error) {
	// robfig/cron v3.0.1 slices past the end of a time zone prefix with nothing after it
	// (it panics): the same error as for any unknown zone.
	if (strings.HasPrefix(spec, "TZ=") || strings.HasPrefix(spec, "CRON_TZ=")) && !strings.Contains(spec, " ") {
		zone := spec[strings.Index(spec, "=")+1:]
		return nil, fmt.Errorf("provided bad location %s: %v", zone, fmt.Errorf("unknown time zone %s", zone))
	}
	s, err := cron.ParseStandard(spec)
	if err != nil {
		return nil, err
	}
	return &CronSchedule{s: s}, nil
}

// Next returns the first activation after t, or the zero time when there is none within
// five years (robfig/cron's search bound).
func (s *CronSchedule) Next(t time.Time) time.Time {
	return s.s.Next(t)
}

// isEvery reports an @every schedule (activations at a fixed interval, not whole minutes).
func (s *CronSchedule) isEvery() bool {
	_, ok := s.s.(cron.ConstantDelaySchedule)
	return ok
}
