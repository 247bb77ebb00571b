package main

import (
	"context"
	"fmt"
	"time"

	"github.com/seed-e9b4dba4/dsh/internal/bench"
)

func main() {
	var ds []time.Duration
	for i := 0; i < 21; i++ {
		s, err := bench.ACPColdStart(context.Background(), bench.ColdStartOptions{Bin: "/tmp/acpbin/dsh", BaseURL: "http://127.0.0.1:9"})
		if err != nil {
			panic(err)
		}
		if i > 0 {
			ds = append(ds, s.Initialize)
		}
	}
	p50, p95 := bench.Percentiles(ds)
	fmt.Println("initialize from spawn p50", p50, "p95", p95)
}
