package sessionquery

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"

	"github.com/seed-e9b4dba4/dsh/host/session"
)

// errReason is the cancellation cause every aborted read must return
// unchanged.
var errReason = errors.New("caller went away")

// cancelOp is one service method reduced to "run it, report the error".
type cancelOp struct {
	name string
	run  func(ctx context.Context, s *Service) error
	// inspects reports whether the method reads a persisted log (and so
	// passes ctx to Inspect as well as List).
	inspects bool
}

func cancelOps() []cancelOp {
	return []cancelOp{
		{"ListSessions", func(ctx context.Context, s *Service) error { _, err := s.ListSessions(ctx); return err }, false},
		{"FilterSessions", func(ctx context.Context, s *Service) error {
			_, err := s.FilterSessions(ctx, []SessionFilter{{Kind: KindID, Values: []string{"durable"}}})
			return err
		}, false},
		{"TraceSession", func(ctx context.Context, s *Service) error { _, err := s.TraceSession(ctx, "durable"); return err }, false},
		{"TraceEvent", func(ctx context.Context, s *Service) error { _, err := s.TraceEvent(ctx, "durable", 0); return err }, true},
		{"ReadEvent", func(ctx context.Context, s *Service) error {
			_, err := s.ReadEvent(ctx, "durable", 0, nil, nil)
			return err
		}, true},
		{"ReadTitleSnapshots", func(ctx context.Context, s *Service) error {
			_, err := s.ReadTitleSnapshots(ctx, []string{"durable"})
			return err
		}, true},
		{"ListEvents", func(ctx context.Context, s *Service) error { _, err := s.ListEvents(ctx, "durable"); return err }, true},
		{"FilterEvents", func(ctx context.Context, s *Service) error { _, err := s.FilterEvents(ctx, "durable", nil); return err }, true},
		{"ReadSurface", func(ctx context.Context, s *Service) error { _, err := s.ReadSurface(ctx, "durable"); return err }, true},
		{"ReadSession", func(ctx context.Context, s *Service) error { _, err := s.ReadSession(ctx, "durable"); return err }, true},
	}
}

func durableFake() *fakePersistence {
	return newFake().add(header("durable", 1), userLog("stored")...)
}

func TestPreCancelledReadsMakeNoBackendCallAndReturnTheCause(t *testing.T) {
	for _, op := range cancelOps() {
		t.Run(op.name, func(t *testing.T) {
			fx := newFixture(t, DefaultConfig())
			p := durableFake()
			fx.mount(t, p)
			ctx, cancel := context.WithCancelCause(context.Background())
			cancel(errReason)
			if err := op.run(ctx, fx.svc); err != errReason {
				t.Fatalf("error = %v, want exactly the cancellation cause", err)
			}
			if n := len(p.CallsOf("list")) + len(p.CallsOf("inspect")); n != 0 {
				t.Fatalf("%d backend calls after a pre-cancel", n)
			}
		})
	}
}

func TestPreCancelledLiveReadIsRejectedWithoutPersistence(t *testing.T) {
	fx := newFixture(t, DefaultConfig())
	p := durableFake()
	fx.mount(t, p)
	fx.attach(t, header("durable", 1), "live")
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(errReason)
	if _, err := fx.svc.ListEvents(ctx, "durable"); err != errReason {
		t.Fatalf("error = %v, want the cause", err)
	}
	if len(p.Calls()) != 0 {
		t.Fatalf("backend calls: %+v", p.Calls())
	}
}

// runBlocked starts op in the bubble and returns a channel with its error.
func runBlocked(ctx context.Context, s *Service, op cancelOp) (done <-chan error) {
	ch := make(chan error, 1)
	go func() { ch <- op.run(ctx, s) }()
	return ch
}

func assertPending(t *testing.T, done <-chan error) {
	t.Helper()
	select {
	case err := <-done:
		t.Fatalf("the call settled (%v) before its backend call did", err)
	default:
	}
}

func TestCancellingDuringAListingForwardsCtxAndAwaitsCleanup(t *testing.T) {
	for _, op := range cancelOps() {
		t.Run(op.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				fx := newFixture(t, DefaultConfig())
				p := durableFake()
				cleanup := make(chan struct{})
				sawCancel := make(chan struct{})
				p.ListHook = func(ctx context.Context, _ int) {
					<-ctx.Done()
					close(sawCancel)
					<-cleanup
				}
				fx.mount(t, p)
				ctx, cancel := context.WithCancelCause(context.Background())
				done := runBlocked(ctx, fx.svc, op)
				synctest.Wait()
				cancel(errReason)
				<-sawCancel
				synctest.Wait()
				assertPending(t, done)
				close(cleanup)
				if err := <-done; err != errReason {
					t.Fatalf("error = %v, want exactly the cause", err)
				}
				lists := p.CallsOf("list")
				if len(lists) != 1 || lists[0].Ctx != ctx {
					t.Fatalf("list calls = %d (ctx forwarded: %v)", len(lists), len(lists) == 1 && lists[0].Ctx == ctx)
				}
				if n := len(p.CallsOf("inspect")); n != 0 {
					t.Fatalf("%d inspections after a cancelled listing", n)
				}
			})
		})
	}
}

func TestABackendIgnoringCancellationIsAwaitedBeforeTheCause(t *testing.T) {
	for _, op := range cancelOps() {
		t.Run(op.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				fx := newFixture(t, DefaultConfig())
				p := durableFake()
				release := make(chan struct{})
				// The last backend call of the method ignores ctx and only
				// returns, successfully, once released.
				if op.inspects {
					p.InspectHook = func(context.Context, string) { <-release }
				} else {
					p.ListHook = func(context.Context, int) { <-release }
				}
				fx.mount(t, p)
				ctx, cancel := context.WithCancelCause(context.Background())
				done := runBlocked(ctx, fx.svc, op)
				synctest.Wait()
				cancel(errReason)
				synctest.Wait()
				assertPending(t, done)
				close(release)
				if err := <-done; err != errReason {
					t.Fatalf("error = %v, want exactly the cause", err)
				}
				for _, c := range p.Calls() {
					if c.Ctx != ctx {
						t.Fatalf("%s did not receive the caller's ctx", c.Op)
					}
				}
				wantInspects := 0
				if op.inspects {
					wantInspects = 1
				}
				if n := len(p.CallsOf("inspect")); n != wantInspects {
					t.Fatalf("inspections = %d, want %d", n, wantInspects)
				}
			})
		})
	}
}

func TestCancellingDuringAnInspectionForwardsCtxAndAwaitsCleanup(t *testing.T) {
	for _, op := range cancelOps() {
		if !op.inspects {
			continue
		}
		t.Run(op.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				fx := newFixture(t, DefaultConfig())
				p := durableFake()
				cleanup := make(chan struct{})
				p.InspectHook = func(ctx context.Context, _ string) {
					<-ctx.Done()
					<-cleanup
				}
				p.InspectErr["durable"] = errors.New("aborted by backend")
				fx.mount(t, p)
				ctx, cancel := context.WithCancelCause(context.Background())
				done := runBlocked(ctx, fx.svc, op)
				synctest.Wait()
				cancel(errReason)
				synctest.Wait()
				assertPending(t, done)
				close(cleanup)
				if err := <-done; err != errReason {
					t.Fatalf("error = %v, want exactly the cause", err)
				}
				inspects := p.CallsOf("inspect")
				if len(inspects) != 1 || inspects[0].Ctx != ctx {
					t.Fatal("the inspection did not receive the caller's ctx")
				}
			})
		})
	}
}

func TestCancelledBackendFailureIsTheCauseNotPersistenceFailed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fx := newFixture(t, DefaultConfig())
		p := durableFake()
		p.ListErr = errors.New("listing torn down")
		p.ListHook = func(ctx context.Context, _ int) { <-ctx.Done() }
		fx.mount(t, p)
		ctx, cancel := context.WithCancelCause(context.Background())
		done := runBlocked(ctx, fx.svc, cancelOps()[0])
		synctest.Wait()
		cancel(errReason)
		if err := <-done; err != errReason {
			t.Fatalf("error = %v, want the cause", err)
		}
	})
}

func TestLiveOwnerAttachingDuringAnInspectionWins(t *testing.T) {
	fx := newFixture(t, DefaultConfig())
	p := newFake().add(header("s", 1), userLog("durable text")...)
	p.InspectHook = func(context.Context, string) {
		l := newLive(t, header("s", 1), nil)
		mustAppend(t, l, session.TypeUserMessage, userText("live text"))
		if err := fx.live.Attach(l); err != nil {
			t.Error(err)
		}
	}
	fx.mount(t, p)
	docs, err := fx.svc.FilterEvents(t.Context(), "s", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != 1 || docs[0].Text != "live text" {
		t.Fatalf("documents = %+v, want the live text", docs)
	}
}
