package main

import (
	"sync/atomic"

	"k8s.io/client-go/util/workqueue"
)

// queueMetrics is the controller's workqueue metrics provider: it counts
// adds and keeps the depth, as a controller exporting them would.
type queueMetrics struct{ adds, depth atomic.Int64 }

type gauge struct{ v *atomic.Int64 }

func (g gauge) Inc()            { g.v.Add(1) }
func (g gauge) Dec()            { g.v.Add(-1) }
func (g gauge) Set(float64)     {}
func (g gauge) Observe(float64) {}

func (m *queueMetrics) NewDepthMetric(string) workqueue.GaugeMetric       { return gauge{&m.depth} }
func (m *queueMetrics) NewAddsMetric(string) workqueue.CounterMetric      { return gauge{&m.adds} }
func (m *queueMetrics) NewLatencyMetric(string) workqueue.HistogramMetric { return gauge{&m.adds} }
func (m *queueMetrics) NewWorkDurationMetric(string) workqueue.HistogramMetric {
	return gauge{&m.adds}
}
func (m *queueMetrics) NewUnfinishedWorkSecondsMetric(string) workqueue.SettableGaugeMetric {
	return gauge{&m.adds}
}
func (m *queueMetrics) NewLongestRunningProcessorSecondsMetric(string) workqueue.SettableGaugeMetric {
	return gauge{&m.adds}
}
func (m *queueMetrics) NewRetriesMetric(string) workqueue.CounterMetric { return gauge{&m.adds} }
