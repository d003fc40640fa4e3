package web

import (
	"fmt"
	"net/url"
	"strconv"
	"time"
)

// timeParam reads a time parameter given as Unix nanoseconds or RFC 3339;
// absent or empty gives 0.
func timeParam(q url.Values, name string) (int64, error) {
	v := q.Get(name)
	if v == "" {
		return 0, nil
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		return n, nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return 0, fmt.Errorf("%w: parameter %s=%q is neither Unix nanoseconds nor an RFC 3339 time", errBadRequest, name, v)
	}
	return t.UnixNano(), nil
}

// intParam reads a non-negative integer parameter (def when absent).
func intParam(q url.Values, name string, def, max int) (int, error) {
	v := q.Get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%w: parameter %s=%q is not a non-negative integer", errBadRequest, name, v)
	}
	return min(n, max), nil
}

func unixTime(ns int64) time.Time {
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns).UTC()
}
