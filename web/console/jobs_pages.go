package console

import (
	"fmt"
	"net/http"
	"net/url"

	"xr/app"
	"xr/web"
)

// The job progress partial: any page that started a background job shows
// its progress by embedding
//
//	<div id="job-progress" hx-get="{{.ProgressURL}}" hx-trigger="load" hx-swap="outerHTML"><a href="{{.ProgressURL}}">…</a></div>
//
// with ProgressURL from jobProgressURL. htmx loads the block
// "job-progress" of web/console/job_progress.tmpl, which polls itself every
// second until the job is done, failed or cancelled, then shows a link to
// next. Without script the link opens the same progress as a page.
func (s *site) jobPages() []web.Route {
	return []web.Route{
		// The job's owner (or a tenant-wide caller) only, as GET /jobs/{id}.
		{M: "GET", P: "/jobs/{id}/progress", Access: web.Staff, API: "GET /jobs/{id}", H: s.pageJobProgress},
	}
}

// jobProgressURL is the address of a job's progress block: next (a local
// path) is linked once the job has finished, with the console text label.
func jobProgressURL(jobID int64, next, label string) string {
	q := url.Values{}
	if next != "" {
		q.Set("next", next)
	}
	if label != "" {
		q.Set("label", label)
	}
	u := fmt.Sprintf("/jobs/%d/progress", jobID)
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	return u
}

// jobProgressView is the data of the progress block.
type jobProgressView struct {
	Job       *app.Job
	Done      int64
	Total     int64 // 0: not known yet (an indeterminate bar)
	Pct       int64
	Finished  bool // done, failed or cancelled: polling stops
	Failed    bool
	Label     string // text key naming the work
	Self      string // the URL the block polls
	Next      string
	NextLabel string
}

func (s *site) pageJobProgress(c *web.Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	j, err := app.JobOf(c.R.Context(), c.Actor, id)
	if err != nil {
		return err
	}
	v := s.NewView(c, "", "job.title")
	q := c.Query()
	d := &jobProgressView{Job: j, Done: j.Progress, Total: j.ProgressTotal, Label: "job.working", NextLabel: "job.continue"}
	if k := "job.kind." + j.Kind; v.T(k) != k {
		d.Label = k
	}
	if n := q.Get("next"); n != "" {
		d.Next = localNext(n)
	}
	if l := q.Get("label"); l != "" && v.T(l) != l {
		d.NextLabel = l // only a key of the catalogue: never text from the query
	}
	d.Self = jobProgressURL(j.ID, d.Next, q.Get("label"))
	switch j.State {
	case "done":
		d.Finished = true
		if d.Total == 0 {
			d.Total = 1
		}
		d.Done = d.Total
	case "failed", "cancelled":
		d.Finished, d.Failed = true, true
	}
	if d.Total > 0 {
		d.Pct = min(d.Done*100/d.Total, 100)
	}
	v.Data = d
	return s.Render(c, http.StatusOK, "job_progress", v)
}
