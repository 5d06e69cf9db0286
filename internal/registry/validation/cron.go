package validation

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// CronSchedule is a parsed CronJob schedule with the semantics of
// github.com/robfig/cron/v3 ParseStandard, which upstream uses both to validate schedules and
// in its CronJob controller:
// five fields (minute hour day-of-month month day-of-week), names for months and days,
// ranges, steps and lists, "*" and "?", the @yearly… descriptors, @every <duration>, and a
// TZ= or CRON_TZ= prefix.
type CronSchedule struct {
	minute, hour, dom, month, dow uint64
	loc                           *time.Location
	every                         time.Duration
}

// starBit marks a field written as "*" or "?" (day-of-month and day-of-week then AND
// instead of OR, as in robfig/cron).
const starBit = 1 << 63

type cronField struct {
	min, max uint
	names    map[string]uint
}

var (
	fieldMinute = cronField{0, 59, nil}
	fieldHour   = cronField{0, 23, nil}
	fieldDom    = cronField{1, 31, nil}
	fieldMonth  = cronField{1, 12, map[string]uint{"jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6, "jul": 7, "aug": 8, "sep": 9, "oct": 10, "nov": 11, "dec": 12}}
	fieldDow    = cronField{0, 6, map[string]uint{"sun": 0, "mon": 1, "tue": 2, "wed": 3, "thu": 4, "fri": 5, "sat": 6}}
)

var cronDescriptors = map[string]string{
	"@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *", "@monthly": "0 0 1 * *",
	"@weekly": "0 0 * * 0", "@daily": "0 0 * * *", "@midnight": "0 0 * * *", "@hourly": "0 * * * *",
}

// ParseCron parses a schedule; its errors are robfig/cron's texts, which upstream puts in
// its validation messages.
func ParseCron(spec string) (*CronSchedule, error) {
	if spec == "" {
		return nil, fmt.Errorf("empty spec string")
	}
	loc := time.Local
	if strings.HasPrefix(spec, "TZ=") || strings.HasPrefix(spec, "CRON_TZ=") {
		i := strings.Index(spec, " ")
		eq := strings.Index(spec, "=")
		if i < 0 {
			return nil, fmt.Errorf("provided bad location %s: %v", spec[eq+1:], fmt.Errorf("unknown time zone %s", spec[eq+1:]))
		}
		l, err := time.LoadLocation(spec[eq+1 : i])
		if err != nil {
			return nil, fmt.Errorf("provided bad location %s: %v", spec[eq+1:i], err)
		}
		loc = l
		spec = strings.TrimSpace(spec[i:])
	}
	if strings.HasPrefix(spec, "@") {
		if strings.HasPrefix(spec, "@every ") {
			d, err := time.ParseDuration(spec[len("@every "):])
			if err != nil {
				return nil, fmt.Errorf("failed to parse duration %s: %s", spec, err)
			}
			if d < time.Second {
				d = time.Second
			}
			return &CronSchedule{every: d - time.Duration(d.Nanoseconds())%time.Second, loc: loc}, nil
		}
		std, ok := cronDescriptors[spec]
		if !ok {
			return nil, fmt.Errorf("unrecognized descriptor: %s", spec)
		}
		spec = std
	}
	fields := strings.Fields(spec)
	if len(fields) != 5 {
		return nil, fmt.Errorf("expected exactly 5 fields, found %d: %s", len(fields), fields)
	}
	s := &CronSchedule{loc: loc}
	for i, f := range []cronField{fieldMinute, fieldHour, fieldDom, fieldMonth, fieldDow} {
		bits, err := parseCronField(fields[i], f)
		if err != nil {
			return nil, err
		}
		*[]*uint64{&s.minute, &s.hour, &s.dom, &s.month, &s.dow}[i] = bits
	}
	return s, nil
}

func parseCronField(field string, f cronField) (uint64, error) {
	var bits uint64
	for _, expr := range strings.FieldsFunc(field, func(r rune) bool { return r == ',' }) {
		b, err := parseCronRange(expr, f)
		if err != nil {
			return 0, err
		}
		bits |= b
	}
	return bits, nil
}

func parseCronRange(expr string, f cronField) (uint64, error) {
	var start, end, step uint
	rangeAndStep := strings.Split(expr, "/")
	lowAndHigh := strings.Split(rangeAndStep[0], "-")
	single := len(lowAndHigh) == 1
	var extra uint64
	var err error
	if lowAndHigh[0] == "*" || lowAndHigh[0] == "?" {
		start, end, extra = f.min, f.max, starBit
	} else {
		if start, err = cronValue(lowAndHigh[0], f.names); err != nil {
			return 0, err
		}
		switch len(lowAndHigh) {
		case 1:
			end = start
		case 2:
			if end, err = cronValue(lowAndHigh[1], f.names); err != nil {
				return 0, err
			}
		default:
			return 0, fmt.Errorf("too many hyphens: %s", expr)
		}
	}
	switch len(rangeAndStep) {
	case 1:
		step = 1
	case 2:
		n, err := strconv.Atoi(rangeAndStep[1])
		if err != nil {
			return 0, fmt.Errorf("failed to parse int from %s: %s", rangeAndStep[1], err)
		}
		if n < 0 {
			return 0, fmt.Errorf("negative number (%d) not allowed: %s", n, rangeAndStep[1])
		}
		step = uint(n)
		if single {
			end = f.max
		}
		if step > 1 {
			extra = 0
		}
	default:
		return 0, fmt.Errorf("too many slashes: %s", expr)
	}
	if start < f.min {
		return 0, fmt.Errorf("beginning of range (%d) below minimum (%d): %s", start, f.min, expr)
	}
	if end > f.max {
		return 0, fmt.Errorf("end of range (%d) above maximum (%d): %s", end, f.max, expr)
	}
	if start > end {
		return 0, fmt.Errorf("beginning of range (%d) beyond end of range (%d): %s", start, end, expr)
	}
	if step == 0 {
		return 0, fmt.Errorf("step of range should be a positive number: %s", expr)
	}
	var bits uint64
	for i := start; i <= end; i += step {
		bits |= 1 << i
	}
	return bits | extra, nil
}

func cronValue(expr string, names map[string]uint) (uint, error) {
	if names != nil {
		if v, ok := names[strings.ToLower(expr)]; ok {
			return v, nil
		}
	}
	n, err := strconv.Atoi(expr)
	if err != nil {
		return 0, fmt.Errorf("failed to parse int from %s: %s", expr, err)
	}
	if n < 0 {
		return 0, fmt.Errorf("negative number (%d) not allowed: %s", n, expr)
	}
	return uint(n), nil
}

// Next returns the first activation strictly after t (zero if none within five years), in
// t's location.
func (s *CronSchedule) Next(t time.Time) time.Time {
	if s.every > 0 {
		return t.Add(s.every - time.Duration(t.Nanosecond()))
	}
	orig := t.Location()
	loc := s.loc
	if loc == time.Local {
		loc = orig
	}
	t = t.In(loc)
	t = time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute()+1, 0, 0, loc)
	limit := t.Year() + 5
	for t.Year() <= limit {
		switch {
		case s.month&(1<<uint(t.Month())) == 0:
			t = time.Date(t.Year(), t.Month()+1, 1, 0, 0, 0, 0, loc)
		case !s.dayMatches(t):
			t = time.Date(t.Year(), t.Month(), t.Day()+1, 0, 0, 0, 0, loc)
		case s.hour&(1<<uint(t.Hour())) == 0:
			t = time.Date(t.Year(), t.Month(), t.Day(), t.Hour()+1, 0, 0, 0, loc)
		case s.minute&(1<<uint(t.Minute())) == 0:
			t = time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute()+1, 0, 0, loc)
		default:
			return t.In(orig)
		}
	}
	return time.Time{}
}

func (s *CronSchedule) dayMatches(t time.Time) bool {
	domMatch := s.dom&(1<<uint(t.Day())) > 0
	dowMatch := s.dow&(1<<uint(t.Weekday())) > 0
	if s.dom&starBit > 0 || s.dow&starBit > 0 {
		return domMatch && dowMatch
	}
	return domMatch || dowMatch
}
