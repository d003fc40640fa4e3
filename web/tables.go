package web

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"

	"github.com/leakscope/leakscope/analysis/flame"
)

// The pprof tables of a flame graph's selection, each computed by
// analysis/flame and served as it is. They take every parameter of the
// flamegraph endpoint (profile, value, snapshot, base, focus, ignore,
// suspect, own, …):
//
//	GET /api/captures/{id}/top?sort=flat|cum|name   flame.TopTable
//	GET /api/captures/{id}/peek?function=FN         flame.PeekTable
//	GET /api/captures/{id}/source?function=FN       flame.LineTable

// topHandler answers GET /api/captures/{id}/top.
func topHandler(w http.ResponseWriter, r *http.Request, c *capture) {
	tableAnswer(w, r, c, "top", func(c *capture, q flame.Query, v url.Values) (any, error) {
		t, err := c.tree(q)
		if err != nil {
			return nil, err
		}
		tt, err := flame.NewTopTable(t, v.Get("sort"))
		if err != nil {
			return nil, fmt.Errorf("%w: %v", errBadRequest, err)
		}
		return tt, nil
	})
}

// peekHandler answers GET /api/captures/{id}/peek?function=FN.
func peekHandler(w http.ResponseWriter, r *http.Request, c *capture) {
	tableAnswer(w, r, c, "peek", func(c *capture, q flame.Query, v url.Values) (any, error) {
		fn, err := functionParam(v)
		if err != nil {
			return nil, err
		}
		q.Invert = false
		t, err := c.tree(q)
		if err != nil {
			return nil, err
		}
		return flame.Peek(t, fn)
	})
}

// sourceHandler answers GET /api/captures/{id}/source?function=FN.
func sourceHandler(w http.ResponseWriter, r *http.Request, c *capture) {
	tableAnswer(w, r, c, "source", func(c *capture, q flame.Query, v url.Values) (any, error) {
		fn, err := functionParam(v)
		if err != nil {
			return nil, err
		}
		st, err := c.Stacks()
		if err != nil {
			return nil, err
		}
		lt, err := st.Lines(c.b, c.s.mem, q, fn)
		if err != nil {
			return nil, err
		}
		if err := lt.AttachSource(c.b, c.s.mem); err != nil {
			return nil, err
		}
		return lt, nil
	})
}

func functionParam(v url.Values) (string, error) {
	fn := v.Get("function")
	if fn == "" {
		return "", fmt.Errorf("%w: give function=NAME (a function of the flame graph)", errBadRequest)
	}
	return fn, nil
}

// tree builds the flame tree of q from the capture's stacks.
func (c *capture) tree(q flame.Query) (*flame.Tree, error) {
	st, err := c.Stacks()
	if err != nil {
		return nil, err
	}
	return st.Build(c.b, c.s.mem, q)
}

// tableAnswer parses the flame query of r and answers what compute makes
// of it, cached by the request's parameters.
func tableAnswer(w http.ResponseWriter, r *http.Request, c *capture, kind string, compute func(*capture, flame.Query, url.Values) (any, error)) {
	v := r.URL.Query()
	q, sandwich, err := flameQuery(v, c)
	if err == nil && sandwich != "" {
		err = fmt.Errorf("%w: sandwich is a flame graph view; %s takes function=", errBadRequest, kind)
	}
	if err != nil {
		writeError(w, statusOf(err), err.Error())
		return
	}
	body, status := c.answers.get(kind+" "+v.Encode(), func() ([]byte, int) {
		out, err := compute(c, q, v)
		if err != nil {
			return encodeError(flameStatus(err), kind+": "+err.Error())
		}
		body, err := json.Marshal(out)
		if err != nil {
			return encodeError(http.StatusInternalServerError, "encode "+kind+": "+err.Error())
		}
		return body, http.StatusOK
	})
	writeBody(w, status, body)
}
