package main

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"time"
)

// rebuildResult is `dsh index rebuild` of the whole corpus, run once as a
// user runs it (the built binary, its progress on stderr).
type rebuildResult struct {
	Wall       time.Duration `json:"wall"`
	CPU        time.Duration `json:"cpu"`
	Sessions   int           `json:"sessions"`
	Events     int64         `json:"events"`
	IndexBytes int64         `json:"indexBytes"`
	LogBytes   int64         `json:"logBytes"`
	RSS        int64         `json:"rss"`
}

// Issue 15's rebuild targets.
const (
	targetRebuildRate = 80_000
	targetIndexRatio  = 1.0
	targetRebuildRSS  = 250 << 20
)

func measureRebuild(l layout, dsh func(...string) (measured, error)) (rebuildResult, error) {
	var res rebuildResult
	m, err := dsh("index", "rebuild")
	if err != nil {
		return res, err
	}
	res.Wall, res.CPU, res.RSS = m.wall, m.cpu, m.maxRSS
	st, err := dsh("index", "status", "--json")
	if err != nil {
		return res, err
	}
	var status struct {
		Sessions  int   `json:"sessions"`
		Events    int64 `json:"events"`
		SizeBytes int64 `json:"sizeBytes"`
	}
	if err := json.Unmarshal(st.stdout, &status); err != nil {
		return res, fmt.Errorf("dsh index status --json printed %q", st.stdout)
	}
	res.Sessions, res.Events, res.IndexBytes = status.Sessions, status.Events, status.SizeBytes
	res.LogBytes, err = logBytes(l.sessions)
	return res, err
}

// logBytes is the size of every session log under root.
func logBytes(root string) (int64, error) {
	var n int64
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".jsonl") {
			return err
		}
		fi, err := d.Info()
		if err == nil {
			n += fi.Size()
		}
		return err
	})
	return n, err
}

func (r rebuildResult) rate() float64 {
	if r.Wall <= 0 {
		return 0
	}
	return float64(r.Events) / r.Wall.Seconds()
}

func (r rebuildResult) ratio() float64 {
	if r.LogBytes <= 0 {
		return 0
	}
	return float64(r.IndexBytes) / float64(r.LogBytes)
}

func (r rebuildResult) row(row func(...string)) {
	perCPU := 0.0
	if r.CPU > 0 {
		perCPU = float64(r.Events) / r.CPU.Seconds()
	}
	row(fmt.Sprintf("dsh index rebuild (%s sessions, %s events, once)", thousands(int64(r.Sessions)), thousands(r.Events)),
		fmt.Sprintf("%s events/s (%.1f s; CPU %.1f s, %s events per CPU-second)", thousands(int64(r.rate())), r.Wall.Seconds(), r.CPU.Seconds(), thousands(int64(perCPU))),
		fmt.Sprintf("index %s ÷ logs %s = %.2f×", mb(r.IndexBytes), mb(r.LogBytes), r.ratio()), "", mb(r.RSS))
}

func (r rebuildResult) targets(row func(...string), verdict func(bool) string) {
	row("dsh index rebuild ≥ 80,000 events/s", thousands(int64(r.rate()))+" events/s", "", verdict(r.rate() >= targetRebuildRate), "")
	row("index size ≤ 1.0× the logs", fmt.Sprintf("%.2f×", r.ratio()), "", verdict(r.LogBytes > 0 && r.ratio() <= targetIndexRatio), "")
	row("dsh index rebuild peak RSS ≤ 250 MB", mb(r.RSS), "", verdict(r.RSS > 0 && r.RSS <= targetRebuildRSS), "")
}
