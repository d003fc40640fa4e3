package deploy

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/apache/arrow/go/v15/parquet/file"
	"github.com/apache/arrow/go/v15/parquet/pqarrow"
)

// checkTrigger checks that the alert that started capture id travels
// with it: the workbench's JSON report holds the alert as Alertmanager
// holds it (name, labels, startsAt: fired), its Markdown and HTML reports and
// postmortem open with it, a Parquet export of the stored capture has it
// in captures.parquet, and headless Chromium reads it in the overview's
// header and the fleet's captures table (web/e2e/trigger.test.mjs).
func (r *alertRig) checkTrigger(id string, fired time.Time) {
	t := r.t
	var rep struct {
		Bundle struct {
			TriggerText string `json:"trigger_text"`
			Trigger     struct {
				Source string
				Alert  struct {
					Name     string
					Labels   map[string]string
					StartsAt time.Time `json:"starts_at"`
				}
			}
		}
	}
	if err := getJSON(r.serveURL+"/api/captures/"+id+"/report?format=json", &rep); err != nil {
		t.Fatal(err)
	}
	al := rep.Bundle.Trigger.Alert
	if rep.Bundle.Trigger.Source != "alert" || al.Name != "GoroutineGrowthFast" || al.Labels["instance"] != r.target || !al.StartsAt.Equal(fired) {
		t.Errorf("report's trigger %+v; want GoroutineGrowthFast on %s firing since %v (Alertmanager's startsAt)", rep.Bundle.Trigger, r.target, fired)
	}
	text := rep.Bundle.TriggerText
	for _, q := range []string{"format=md", "format=md&postmortem=1", "format=html", "format=html&postmortem=1"} {
		body := r.get("/api/captures/" + id + "/report?" + q)
		if q == "format=md" || q == "format=md&postmortem=1" {
			head := strings.Join(strings.SplitN(body, "\n", 6)[:5], "\n")
			if !strings.Contains(head, "**Trigger:** Alertmanager alert GoroutineGrowthFast") {
				t.Errorf("%s does not open with the trigger:\n%s", q, head)
			}
		}
		if !strings.Contains(body, "GoroutineGrowthFast") || !strings.Contains(body, "firing since") {
			t.Errorf("%s does not name the alert", q)
		}
	}
	r.checkTriggerParquet(id, fired)
	r.checkTriggerPage(id)
	if !strings.Contains(text, "instance="+r.target) {
		t.Errorf("trigger text %q lacks the instance", text)
	}
}

// amStartsAt is when Alertmanager says the alert began firing.
func (r *alertRig) amStartsAt(name string) time.Time {
	var alerts []struct {
		Labels   map[string]string
		StartsAt time.Time
	}
	if err := getJSON("http://"+r.amAddr+"/api/v2/alerts", &alerts); err != nil {
		r.t.Fatal(err)
	}
	for _, a := range alerts {
		if a.Labels["alertname"] == name && a.Labels["instance"] == r.target {
			return a.StartsAt
		}
	}
	r.t.Fatalf("Alertmanager holds no %s for %s: %+v", name, r.target, alerts)
	return time.Time{}
}

// get fetches a workbench path's body.
func (r *alertRig) get(path string) string {
	resp, err := http.Get(strings.TrimSuffix(r.serveURL, "/") + path)
	if err != nil {
		r.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		r.t.Fatalf("GET %s: %s", path, resp.Status)
	}
	return string(body)
}

// checkTriggerParquet exports the workbench's copy of capture id and
// reads the alert back from captures.parquet.
func (r *alertRig) checkTriggerParquet(id string, fired time.Time) {
	t := r.t
	out := filepath.Join(r.tmp, "export")
	cmd := exec.CommandContext(r.ctx, r.bin, "export", filepath.Join(r.tmp, "data", "captures", id), "--format", "parquet", "-o", out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("export: %v\n%s", err, b)
	}
	paths, _ := filepath.Glob(filepath.Join(out, "node=*", "capture=*", "captures.parquet"))
	if len(paths) != 1 {
		t.Fatalf("export holds %v, want one captures.parquet", paths)
	}
	f, err := file.OpenParquetFile(paths[0], false)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fr, err := pqarrow.NewFileReader(f, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Release()
	col := func(name string) arrow.Array {
		idx := tbl.Schema().FieldIndices(name)
		if len(idx) != 1 || tbl.NumRows() != 1 {
			t.Fatalf("captures.parquet: column %s, %d rows", name, tbl.NumRows())
		}
		return tbl.Column(idx[0]).Data().Chunk(0)
	}
	at := col("alert_fired_at").(*array.Timestamp).Value(0)
	if got := col("alert").ValueStr(0); got != "GoroutineGrowthFast" || !time.Unix(0, int64(at)).Equal(fired) ||
		!strings.Contains(col("alert_labels").ValueStr(0), `"instance=`+r.target+`"`) {
		t.Errorf("captures.parquet: alert %q fired at %v labels %s; want GoroutineGrowthFast at %v", got, time.Unix(0, int64(at)).UTC(), col("alert_labels").ValueStr(0), fired)
	}
}

// checkTriggerPage runs web/e2e/trigger.test.mjs in headless Chromium
// against the workbench (needs node, Chromium and web/e2e's npm
// packages, which make deps-npm installs; skipped without them, failed
// under CI).
func (r *alertRig) checkTriggerPage(id string) {
	t := r.t
	node, errNode := exec.LookPath("node")
	chromium := os.Getenv("CHROMIUM")
	if chromium == "" {
		chromium = "/usr/bin/chromium"
	}
	_, errChrome := os.Stat(chromium)
	_, errMods := os.Stat("../web/e2e/node_modules/playwright-core")
	if err := errors.Join(errNode, errChrome, errMods); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("the workbench page cannot be read: %v", err)
		}
		t.Logf("the workbench page is not read: %v", err)
		return
	}
	cmd := exec.CommandContext(r.ctx, node, "--test", "--test-reporter=spec", "trigger.test.mjs")
	cmd.Dir = "../web/e2e"
	cmd.Env = append(os.Environ(), "LEAKSCOPE_URL="+strings.TrimSuffix(r.serveURL, "/"), "LEAKSCOPE_CAPTURE="+id, "CHROMIUM="+chromium,
		"LEAKSCOPE_ALERT=GoroutineGrowthFast", "LEAKSCOPE_INSTANCE="+r.target)
	out, err := cmd.CombinedOutput()
	t.Logf("node --test trigger.test.mjs:\n%s", out)
	if err != nil {
		t.Errorf("trigger.test.mjs: %v", err)
	}
}
