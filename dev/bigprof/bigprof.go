// Package bigprof builds the large heap profile that the pprof ingest
// benchmarks (go test -bench and profbench) measure.
package bigprof

import (
	"bytes"
	"fmt"
	"time"

	"github.com/google/pprof/profile"
)

// Profile returns a gzipped heap profile the size of a busy service's:
// 200,000 samples over 20,000 functions, stacks 12 to 40 frames deep, all
// generated from a fixed seed.
func Profile() ([]byte, error) {
	p := &profile.Profile{
		SampleType: []*profile.ValueType{
			{Type: "alloc_objects", Unit: "count"}, {Type: "alloc_space", Unit: "bytes"},
			{Type: "inuse_objects", Unit: "count"}, {Type: "inuse_space", Unit: "bytes"},
		},
		PeriodType: &profile.ValueType{Type: "space", Unit: "bytes"},
		Period:     512 * 1024,
		TimeNanos:  time.Now().UnixNano(),
	}
	m := &profile.Mapping{ID: 1, Start: 0x400000, Limit: 0x9000000, File: "/bin/svc"}
	p.Mapping = []*profile.Mapping{m}
	const nfn = 20000
	for i := 0; i < nfn; i++ {
		fn := &profile.Function{ID: uint64(i + 1), Name: fmt.Sprintf("example.com/svc/pkg%d.(*T%d).Method%d", i%97, i%13, i), Filename: fmt.Sprintf("/src/pkg%d/file%d.go", i%97, i%31)}
		p.Function = append(p.Function, fn)
		p.Location = append(p.Location, &profile.Location{ID: uint64(i + 1), Mapping: m, Address: uint64(0x400000 + i*16), Line: []profile.Line{{Function: fn, Line: int64(10 + i%400)}}})
	}
	seed := uint64(42)
	rnd := func() uint64 { seed = seed*6364136223846793005 + 1442695040888963407; return seed >> 33 }
	for i := 0; i < 200000; i++ {
		depth := 12 + int(rnd()%29)
		locs := make([]*profile.Location, depth)
		for d := range locs {
			locs[d] = p.Location[rnd()%nfn]
		}
		v := int64(rnd() % 100000)
		p.Sample = append(p.Sample, &profile.Sample{Location: locs, Value: []int64{v / 64, v, v / 128, v / 2}})
	}
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
