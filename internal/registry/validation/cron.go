package validation

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// The standard cron grammar of github.com/robfig/cron/v3 ParseStandard
// (minute hour day-of-month month day-of-week, descriptors, TZ= prefix),
// which upstream uses to validate CronJob schedules. Only parse errors are
// needed here, with that package's texts.

type cronBounds struct {
	min, max uint
	names    map[string]uint
}

var (
	cronMinutes = cronBounds{0, 59, nil}
	cronHours   = cronBounds{0, 23, nil}
	cronDom     = cronBounds{1, 31, nil}
	cronMonths  = cronBounds{1, 12, map[string]uint{
		"jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6,
		"jul": 7, "aug": 8, "sep": 9, "oct": 10, "nov": 11, "dec": 12,
	}}
	cronDow = cronBounds{0, 6, map[string]uint{
		"sun": 0, "mon": 1, "tue": 2, "wed": 3, "thu": 4, "fri": 5, "sat": 6,
	}}
)

// parseStandardCron returns robfig/cron's error for an invalid spec.
func parseStandardCron(spec string) error {
	if spec == "" {
		return fmt.Errorf("empty spec string")
	}
	if strings.HasPrefix(spec, "TZ=") || strings.HasPrefix(spec, "CRON_TZ=") {
		i := strings.Index(spec, " ")
		eq := strings.Index(spec, "=")
		if i < 0 {
			return fmt.Errorf("provided bad location %s: %v", spec[eq+1:], fmt.Errorf("unknown time zone %s", spec[eq+1:]))
		}
		if _, err := time.LoadLocation(spec[eq+1 : i]); err != nil {
			return fmt.Errorf("provided bad location %s: %v", spec[eq+1:i], err)
		}
		spec = strings.TrimSpace(spec[i:])
	}
	if strings.HasPrefix(spec, "@") {
		switch spec {
		case "@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly":
			return nil
		}
		const every = "@every "
		if strings.HasPrefix(spec, every) {
			if _, err := time.ParseDuration(spec[len(every):]); err != nil {
				return fmt.Errorf("failed to parse duration %s: %s", spec, err)
			}
			return nil
		}
		return fmt.Errorf("unrecognized descriptor: %s", spec)
	}
	fields := strings.Fields(spec)
	if len(fields) != 5 {
		return fmt.Errorf("expected exactly 5 fields, found %d: %s", len(fields), fields)
	}
	for i, b := range []cronBounds{cronMinutes, cronHours, cronDom, cronMonths, cronDow} {
		for _, expr := range strings.FieldsFunc(fields[i], func(r rune) bool { return r == ',' }) {
			if err := cronRange(expr, b); err != nil {
				return err
			}
		}
	}
	return nil
}

func cronRange(expr string, r cronBounds) error {
	var start, end, step uint
	rangeAndStep := strings.Split(expr, "/")
	lowAndHigh := strings.Split(rangeAndStep[0], "-")
	single := len(lowAndHigh) == 1
	var err error
	if lowAndHigh[0] == "*" || lowAndHigh[0] == "?" {
		start, end = r.min, r.max
	} else {
		if start, err = cronIntOrName(lowAndHigh[0], r.names); err != nil {
			return err
		}
		switch len(lowAndHigh) {
		case 1:
			end = start
		case 2:
			if end, err = cronIntOrName(lowAndHigh[1], r.names); err != nil {
				return err
			}
		default:
			return fmt.Errorf("too many hyphens: %s", expr)
		}
	}
	switch len(rangeAndStep) {
	case 1:
		step = 1
	case 2:
		if step, err = cronInt(rangeAndStep[1]); err != nil {
			return err
		}
		if single {
			end = r.max
		}
	default:
		return fmt.Errorf("too many slashes: %s", expr)
	}
	if start < r.min {
		return fmt.Errorf("beginning of range (%d) below minimum (%d): %s", start, r.min, expr)
	}
	if end > r.max {
		return fmt.Errorf("end of range (%d) above maximum (%d): %s", end, r.max, expr)
	}
	if start > end {
		return fmt.Errorf("beginning of range (%d) beyond end of range (%d): %s", start, end, expr)
	}
	if step == 0 {
		return fmt.Errorf("step of range should be a positive number: %s", expr)
	}
	return nil
}

func cronIntOrName(expr string, names map[string]uint) (uint, error) {
	if v, ok := names[strings.ToLower(expr)]; ok {
		return v, nil
	}
	return cronInt(expr)
}

func cronInt(expr string) (uint, error) {
	n, err := strconv.Atoi(expr)
	if err != nil {
		return 0, fmt.Errorf("failed to parse int from %s: %s", expr, err)
	}
	if n < 0 {
		return 0, fmt.Errorf("negative number (%d) not allowed: %s", n, expr)
	}
	return uint(n), nil
}
