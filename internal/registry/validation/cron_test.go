package validation

import (
	"testing"
	"time"
)

func TestParseCronErrors(t *testing.T) {
	cases := []struct{ spec, err string }{
		{"", "empty spec string"},
		{"* * * *", "expected exactly 5 fields, found 4: [* * * *]"},
		{"60 * * * *", "end of range (60) above maximum (59): 60"},
		{"* * 0 * *", "beginning of range (0) below minimum (1): 0"},
		{"5-1 * * * *", "beginning of range (5) beyond end of range (1): 5-1"},
		{"*/0 * * * *", "step of range should be a positive number: */0"},
		{"a * * * *", `failed to parse int from a: strconv.Atoi: parsing "a": invalid syntax`},
		{"1-2-3 * * * *", "too many hyphens: 1-2-3"},
		{"@fortnightly", "unrecognized descriptor: @fortnightly"},
		{"TZ=Nowhere/City * * * * *", "provided bad location Nowhere/City: unknown time zone Nowhere/City"},
	}
	for _, tc := range cases {
		_, err := ParseCron(tc.spec)
		if err == nil || err.Error() != tc.err {
			t.Errorf("ParseCron(%q) error = %v, want %q", tc.spec, err, tc.err)
		}
	}
}

func TestCronNext(t *testing.T) {
	base := time.Date(2024, time.January, 31, 10, 29, 30, 0, time.UTC) // a Wednesday
	cases := []struct {
		spec string
		want time.Time
	}{
		{"* * * * *", time.Date(2024, 1, 31, 10, 30, 0, 0, time.UTC)},
		{"*/15 * * * *", time.Date(2024, 1, 31, 10, 30, 0, 0, time.UTC)},
		{"0 * * * *", time.Date(2024, 1, 31, 11, 0, 0, 0, time.UTC)},
		{"@hourly", time.Date(2024, 1, 31, 11, 0, 0, 0, time.UTC)},
		{"@daily", time.Date(2024, 2, 1, 0, 0, 0, 0, time.UTC)},
		{"@weekly", time.Date(2024, 2, 4, 0, 0, 0, 0, time.UTC)},
		{"@monthly", time.Date(2024, 2, 1, 0, 0, 0, 0, time.UTC)},
		{"@yearly", time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)},
		{"0 9 * * mon-fri", time.Date(2024, 2, 1, 9, 0, 0, 0, time.UTC)},
		{"0 0 29 feb *", time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC)},
		{"0 0 30 * *", time.Date(2024, 3, 30, 0, 0, 0, 0, time.UTC)},
		// Day of month OR day of week when both are restricted.
		{"0 0 15 * sun", time.Date(2024, 2, 4, 0, 0, 0, 0, time.UTC)},
		{"5/20 * * * *", time.Date(2024, 1, 31, 10, 45, 0, 0, time.UTC)},
		{"TZ=America/New_York 0 6 * * *", time.Date(2024, 1, 31, 11, 0, 0, 0, time.UTC)},
		{"@every 90s", base.Add(90 * time.Second)},
	}
	for _, tc := range cases {
		s, err := ParseCron(tc.spec)
		if err != nil {
			t.Fatalf("ParseCron(%q): %v", tc.spec, err)
		}
		if got := s.Next(base); !got.Equal(tc.want) {
			t.Errorf("%q.Next(%v) = %v, want %v", tc.spec, base, got, tc.want)
		}
	}
	if s, _ := ParseCron("0 0 31 2 *"); !s.Next(base).IsZero() {
		t.Errorf("31 February should never come")
	}
}

// FuzzParseCron: no schedule text makes the parser or Next panic, and an activation Next
// finds is a whole minute strictly after the start (or, for @every, the interval later).
func FuzzParseCron(f *testing.F) {
	for _, seed := range []string{"* * * * *", "*/15 1-5 ? jan-mar mon,wed", "TZ=UTC 0 0 29 feb *", "@every 1h", "@weekly", "5/20 * 1-31/2 * sun", "1-2-3 * * * *", "-1 * * * *", "*/-3 * * * *", "CRON_TZ="} {
		f.Add(seed)
	}
	base := time.Date(2024, time.January, 31, 10, 29, 30, 0, time.UTC)
	f.Fuzz(func(t *testing.T, spec string) {
		s, err := ParseCron(spec)
		if err != nil {
			if s != nil {
				t.Fatalf("ParseCron(%q) returned a schedule with error %v", spec, err)
			}
			return
		}
		next := s.Next(base)
		if next.IsZero() {
			return
		}
		if !next.After(base) {
			t.Fatalf("ParseCron(%q).Next(%v) = %v, not after it", spec, base, next)
		}
		if !s.isEvery() && (next.Second() != 0 || next.Nanosecond() != 0) {
			t.Fatalf("ParseCron(%q).Next(%v) = %v, not a whole minute", spec, base, next)
		}
	})
}
