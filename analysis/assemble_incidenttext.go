package analysis

import "github.com/leakscope/leakscope/internal/format"

// incidentText formats an incident's figures once, for every view (the
// workbench prints these strings as they are).
func incidentText(inc Incident) *IncidentText {
	t := &IncidentText{Score: format.Score(inc.Score), FirstSeen: format.Time(inc.FirstSeen)}
	if inc.Goroutines > 0 {
		t.Goroutines = format.Count(inc.Goroutines, "goroutine")
	}
	switch {
	case inc.GoroutinesPerMin != 0:
		t.Rate = FormatRate(inc.GoroutinesPerMin, KindGoroutine)
	case inc.Goroutines == 0 && inc.BytesPerMin != 0:
		t.Rate = FormatRate(inc.BytesPerMin, KindHeap)
	}
	if inc.CallsPerMin > 0 {
		t.PerCall = format.Figure(inc.CallsPerMin) + " calls/min, " + format.Count(inc.PerCall, "goroutine") + " per call"
	}
	if inc.RetainedBytes > 0 {
		t.Retained = format.Bytes(float64(inc.RetainedBytes))
	}
	return t
}
