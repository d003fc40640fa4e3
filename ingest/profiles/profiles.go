package profiles

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/google/pprof/profile"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/schema"
)

// Kind is the artifact kind recorded for pprof profiles.
const Kind = "pprof"

// Options tune [IngestWith].
type Options struct {
	// Taken reports whether the bundle already holds a snapshot of the
	// profile at ts. A profile whose time is taken is placed 1 ns after
	// it (a.TimeBasis becomes [bundle.TimeOrder]), so that two files never
	// merge into one snapshot. Nil means no time is taken.
	Taken func(profile string, ts time.Time) bool
	// Limits bound what the profile may decompress to and take in
	// memory (zero fields: [DefaultLimits]).
	Limits Limits
}

// Ingest is [IngestWith] with no options.
func Ingest(w *bundle.Writer, r io.Reader, a *bundle.Artifact) error {
	return IngestWith(w, r, a, Options{})
}

// IngestWith parses the pprof profile in r and appends one samples row per
// sample. The snapshot time is a.Time when the user gave it (a.TimeBasis
// [bundle.TimeGiven]), else the profile's TimeNanos, else a.Time.
// a.Profile, if set, names the profile (the capture knows which endpoint
// it scraped); otherwise it is recognised from the sample types. It fills
// a.Kind, a.Profile, a.Rows, a.Status, a.Period and, when the profile's
// own time is used, a.Time and a.TimeBasis.
func IngestWith(w *bundle.Writer, r io.Reader, a *bundle.Artifact, opts Options) error {
	p, form, err := parse(r, opts.Limits.orDefault())
	if err != nil {
		return err
	}
	name := a.Profile
	if name == "" && form == formMutex {
		// Mutex and block profiles have the same sample types; the
		// legacy text says which it is in its header.
		name = schema.ProfileMutex
	}
	if name == "" {
		name = Name(p)
	}
	if name == "" {
		return fmt.Errorf("profile with sample types %s is not one the Go runtime writes", sampleTypes(p))
	}
	ts := a.Time
	if p.TimeNanos != 0 && a.TimeBasis != bundle.TimeGiven {
		ts = time.Unix(0, p.TimeNanos)
		a.TimeBasis, a.TimeDetail = bundle.TimeContent, "the profile's own time (TimeNanos)"
	}
	if opts.Taken != nil && opts.Taken(name, ts) {
		at := ts
		for opts.Taken(name, ts) {
			ts = ts.Add(time.Nanosecond)
		}
		a.TimeDetail = fmt.Sprintf("another %s profile has the same time %s (%s); placed after it in argument order", name, at.UTC().Format(time.RFC3339Nano), a.TimeBasis)
		a.TimeBasis = bundle.TimeOrder
	}
	cols, err := valueColumns(p, name)
	if err != nil {
		return err
	}
	var stacks stackCache
	for _, s := range p.Sample {
		sid, err := stacks.id(w, s.Location)
		if err != nil {
			return err
		}
		row := schema.Sample{SnapshotTS: ts.UnixNano(), Profile: name, StackID: sid, Labels: Labels(s), Source: a.Name}
		for i, col := range cols {
			if col != "" {
				row.Set(col, s.Value[i])
			}
		}
		if err := w.Append(row); err != nil {
			return err
		}
	}
	a.Kind = Kind
	a.Profile = name
	a.Time = ts
	a.Period = p.Period
	a.Rows = int64(len(p.Sample))
	a.Status = bundle.StatusComplete
	w.Update(func(m *bundle.Manifest) {
		src := m.Source(bundle.SourcePprof)
		if src.Counters == nil {
			src.Counters = map[string]int64{}
		}
		src.Counters[name+"_snapshots"]++
		m.Widen(ts)
	})
	return nil
}

// ParseLimits reads a whole profile (gzipped or not) and validates it: the
// protobuf form, or a legacy form profile.Parse reads (Go's debug=1 text,
// the binary CPU profiles Go wrote before 1.9, contention and threadz
// text). Errors say what is wrong; gzip and protobuf errors keep pprof's
// wording. A profile past lim (zero fields:
// [DefaultLimits]) is refused with [ErrTooLarge].
func ParseLimits(r io.Reader, lim Limits) (*profile.Profile, error) {
	p, _, err := parse(r, lim.orDefault())
	return p, err
}

// parse is ParseLimits that also says which legacy form the profile had ("" for
// protobuf; see legacyForm).
func parse(r io.Reader, lim Limits) (*profile.Profile, string, error) {
	data, err := readBounded(r, lim)
	if err != nil {
		return nil, "", err
	}
	if len(data) == 0 {
		return nil, "", fmt.Errorf("empty file: not a pprof profile")
	}
	if err := checkMemory(data, lim.MaxMemory); err != nil {
		return nil, "", err
	}
	form := legacyForm(data)
	if form == formJava {
		return nil, "", fmt.Errorf("a Java profile, not from a Go program")
	}
	p, err := profile.ParseData(data)
	if err != nil {
		return nil, "", fmt.Errorf("not a valid pprof profile: %w", err)
	}
	if err := p.CheckValid(); err != nil {
		return nil, "", fmt.Errorf("invalid pprof profile: %w", err)
	}
	if form != "" && form != formCPU {
		symbolizeComments(p, data)
	}
	return p, form, nil
}

// Name recognises which Go runtime profile p is from its sample types, or
// returns "" when it is none of them.
func Name(p *profile.Profile) string {
	types := sampleTypes(p)
	switch types {
	case "goroutine/count":
		return schema.ProfileGoroutine
	case "goroutineleak/count":
		return schema.ProfileGoroutineLeak
	case "threadcreate/count":
		return schema.ProfileThreadcreate
	case "thread/count":
		return schema.ProfileThreads
	case "samples/count,cpu/nanoseconds":
		return schema.ProfileCPU
	case "alloc_objects/count,alloc_space/bytes,inuse_objects/count,inuse_space/bytes":
		if p.DefaultSampleType == "alloc_space" || p.DefaultSampleType == "alloc_objects" {
			return schema.ProfileAllocs
		}
		return schema.ProfileHeap
	case "contentions/count,delay/nanoseconds":
		if isMutex(p) {
			return schema.ProfileMutex
		}
		return schema.ProfileBlock
	}
	return ""
}

// isMutex tells a mutex profile from a block profile: both have the same
// sample types, but mutex samples are recorded at the unlock.
func isMutex(p *profile.Profile) bool {
	for _, s := range p.Sample {
		if len(s.Location) == 0 || len(s.Location[0].Line) == 0 || s.Location[0].Line[0].Function == nil {
			continue
		}
		leaf := s.Location[0].Line[0].Function.Name
		if strings.HasSuffix(leaf, "Unlock") || leaf == "runtime.unlock" || strings.HasSuffix(leaf, ".unlockWithRank") {
			return true
		}
	}
	return false
}

func sampleTypes(p *profile.Profile) string {
	parts := make([]string, len(p.SampleType))
	for i, st := range p.SampleType {
		parts[i] = st.Type + "/" + st.Unit
	}
	return strings.Join(parts, ",")
}

// valueColumns maps each of p's sample types to a samples column.
func valueColumns(p *profile.Profile, name string) ([]string, error) {
	cols := make([]string, len(p.SampleType))
	for i, st := range p.SampleType {
		switch {
		case st.Type == "cpu" && st.Unit == "nanoseconds":
			cols[i] = schema.ColCPUNanosecs
		case st.Type == "samples":
			cols[i] = schema.ColSamplesCount
		case st.Unit == "count" && (st.Type == name || st.Type == "goroutine" || st.Type == "threadcreate" || st.Type == "goroutineleak" || st.Type == "thread"):
			cols[i] = schema.ColCount
		case st.Type == "contentions":
			cols[i] = schema.ColContentions
		case st.Type == "delay":
			cols[i] = schema.ColDelay
		case st.Type == schema.ColInuseSpace, st.Type == schema.ColInuseObjects, st.Type == schema.ColAllocSpace, st.Type == schema.ColAllocObjects:
			cols[i] = st.Type
		default:
			return nil, fmt.Errorf("sample type %s/%s has no samples column", st.Type, st.Unit)
		}
	}
	return cols, nil
}

// Labels renders a sample's labels as sorted "key=value" pairs joined by
// commas (numeric labels as "key=N unit").
func Labels(s *profile.Sample) string {
	if len(s.Label) == 0 && len(s.NumLabel) == 0 {
		return ""
	}
	var parts []string
	for k, vs := range s.Label {
		for _, v := range vs {
			parts = append(parts, k+"="+v)
		}
	}
	for k, vs := range s.NumLabel {
		for i, v := range vs {
			unit := ""
			if us := s.NumUnit[k]; i < len(us) && us[i] != "" {
				unit = " " + us[i]
			}
			parts = append(parts, fmt.Sprintf("%s=%d%s", k, v, unit))
		}
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}
