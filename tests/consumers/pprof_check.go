// pprof_check reads a profile with github.com/google/pprof/profile, the
// parser of go tool pprof, Parca and Pyroscope, checks that the parser
// finds it valid, and prints what tests/e2e/consumers.sh compares with
// icppd's own numbers, one "key value" per line.
package main

import (
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/google/pprof/profile"
)

func main() {
	if len(os.Args) != 2 && len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: pprof_check FILE [FUNCTION]")
		os.Exit(2)
	}
	f, err := os.Open(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	p, err := profile.Parse(f)
	if err != nil {
		fmt.Fprintln(os.Stderr, "parse:", err)
		os.Exit(1)
	}
	if err := p.CheckValid(); err != nil {
		fmt.Fprintln(os.Stderr, "invalid:", err)
		os.Exit(1)
	}
	for i, t := range p.SampleType {
		var sum int64
		zero := 0
		for _, s := range p.Sample {
			sum += s.Value[i]
			if s.Value[i] == 0 {
				zero++
			}
		}
		fmt.Printf("type%d %s/%s\n", i, t.Type, t.Unit)
		fmt.Printf("total%d %d\n", i, sum)
		fmt.Printf("zero%d %d\n", i, zero)
	}
	if p.PeriodType != nil {
		fmt.Printf("period_type %s/%s\n", p.PeriodType.Type, p.PeriodType.Unit)
	}
	fmt.Printf("period %d\n", p.Period)
	fmt.Printf("duration %d\n", p.DurationNanos)
	fmt.Printf("time %d\n", p.TimeNanos)
	fmt.Printf("samples %d\n", len(p.Sample))
	for i, m := range p.Mapping {
		fmt.Printf("mapping%d %s %x %x %x %s\n", i, m.File, m.Start,
			m.Limit, m.Offset, m.BuildID)
	}
	labels := map[string]int{}
	roots := map[string]int64{}
	for _, s := range p.Sample {
		for k := range s.Label {
			labels[k]++
		}
		for k := range s.NumLabel {
			labels[k]++
		}
		// the outermost frame, as -top -cum would rank it
		if n := len(s.Location); n > 0 {
			l := s.Location[n-1]
			if len(l.Line) > 0 {
				roots[l.Line[len(l.Line)-1].Function.Name] += s.Value[0]
			}
		}
	}
	keys := []string{}
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Printf("label %s %d\n", k, labels[k])
	}
	best, bestv := "", int64(-1)
	for k, v := range roots {
		if v > bestv {
			best, bestv = k, v
		}
	}
	fmt.Printf("root %s %d\n", strings.ReplaceAll(best, " ", "_"), bestv)
	unknown := 0
	for k := range roots {
		if strings.HasPrefix(k, "[unknown callers") {
			unknown++
		}
	}
	fmt.Printf("unknown_roots %d\n", unknown)
	// FUNCTION's cumulative value, as -top -cum gives it: the samples
	// with it anywhere on their stack
	if len(os.Args) == 3 {
		var cum int64
		for _, s := range p.Sample {
			for _, l := range s.Location {
				found := false
				for _, ln := range l.Line {
					if ln.Function.Name == os.Args[2] {
						found = true
					}
				}
				if found {
					cum += s.Value[0]
					break
				}
			}
		}
		fmt.Printf("cum %s %d\n", os.Args[2], cum)
	}
	lines := 0
	for _, l := range p.Location {
		for _, ln := range l.Line {
			if ln.Line > 0 {
				lines++
			}
		}
	}
	fmt.Printf("locations %d\n", len(p.Location))
	fmt.Printf("locations_with_lines %d\n", lines)
}
