package hook

import "sync"

// Observers is an ordered list of callbacks notified of events of type E.
// The zero value is ready to use.
type Observers[E any] struct {
	mu     sync.Mutex
	nextID int
	subs   []observer[E]
}

type observer[E any] struct {
	id int
	fn func(E)
}

// Subscribe registers fn and returns its remover.
func (o *Observers[E]) Subscribe(fn func(E)) (unsubscribe func()) {
	o.mu.Lock()
	o.nextID++
	id := o.nextID
	o.subs = append(o.subs, observer[E]{id, fn})
	o.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			o.mu.Lock()
			defer o.mu.Unlock()
			out := o.subs[:0:0]
			for _, s := range o.subs {
				if s.id != id {
					out = append(out, s)
				}
			}
			o.subs = out
		})
	}
}

// Emit calls every observer in registration order on the calling goroutine.
// A panicking observer is contained so one plugin cannot break another; its
// panic value is passed to onPanic when that is non-nil.
func (o *Observers[E]) Emit(e E, onPanic func(any)) {
	o.mu.Lock()
	subs := append([]observer[E](nil), o.subs...)
	o.mu.Unlock()
	for _, s := range subs {
		func() {
			defer func() {
				if r := recover(); r != nil && onPanic != nil {
					onPanic(r)
				}
			}()
			s.fn(e)
		}()
	}
}
