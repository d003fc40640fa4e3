// Package deploy holds no code: its tests check the deployment files
// beside it — the Prometheus rules (promtool check and test), the
// Prometheus and Alertmanager configurations, the systemd unit
// (systemd-analyze verify) and the Kubernetes DaemonSet (its fields, and
// its arguments against the real CLI).
package deploy
