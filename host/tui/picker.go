package tui

import (
	"strings"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"
)

// pickItem is one choice of a picker.
type pickItem struct {
	row listRow
	// key is matched by the filter (lower-cased words must all occur).
	key      string
	value    any
	disabled bool
}

// picker is a full-screen type-to-filter chooser: a title bar, a filter
// input, the list and a footer of keys. Owners fill items and handle
// choose; extra handles keys the picker does not (Tab, Shift+Tab).
type picker struct {
	u       *ui
	root    *tview.Flex
	title   *bar
	filter  *tview.InputField
	list    *listView
	footer  *bar
	items   []pickItem
	shown   []int // indexes into items of the visible rows
	status  string
	heading func() []span
	keys    string
	choose  func(item pickItem)
	extra   func(ev *tcell.EventKey) bool
}

func newPicker(u *ui, heading func() []span, keys string) *picker {
	th := u.th
	p := &picker{u: u, heading: heading, keys: keys}
	p.title = newBar(th.bar, th.escape, func(int) ([]span, []span) { return p.heading(), nil })
	p.filter = tview.NewInputField().SetLabel(" filter: ").SetLabelStyle(th.dim).
		SetFieldStyle(th.base).SetPlaceholder("type to filter").SetPlaceholderStyle(th.dim)
	p.filter.SetChangedFunc(func(string) { p.refilter() })
	p.filter.SetInputCapture(p.key)
	p.list = newListView(th)
	p.list.activate = func(int) { p.pick() }
	p.footer = newBar(th.bar, th.escape, func(int) ([]span, []span) {
		left := []span{{" " + p.keys, th.barDim}}
		if p.status != "" {
			return left, []span{{p.status + " ", th.bar}}
		}
		return left, nil
	})
	p.root = tview.NewFlex().SetDirection(tview.FlexRow).
		AddItem(p.title, 1, 0, false).
		AddItem(p.filter, 1, 0, true).
		AddItem(p.list, 0, 1, false).
		AddItem(p.footer, 1, 0, false)
	return p
}

func (p *picker) setItems(items []pickItem) {
	p.items = items
	p.refilter()
}

// refilter shows the items whose key holds every word of the filter.
func (p *picker) refilter() {
	words := strings.Fields(strings.ToLower(p.filter.GetText()))
	p.shown = p.shown[:0]
	rows := make([]listRow, 0, len(p.items))
	for i, it := range p.items {
		k := strings.ToLower(it.key)
		ok := true
		for _, w := range words {
			if !strings.Contains(k, w) {
				ok = false
				break
			}
		}
		if ok {
			p.shown = append(p.shown, i)
			rows = append(rows, it.row)
		}
	}
	p.list.setRows(rows)
}

// key handles navigation while the filter has focus.
func (p *picker) key(ev *tcell.EventKey) *tcell.EventKey {
	if p.extra != nil && p.extra(ev) {
		return nil
	}
	switch ev.Key() {
	case tcell.KeyUp:
		p.list.move(-1)
	case tcell.KeyDown:
		p.list.move(1)
	case tcell.KeyPgUp:
		p.list.move(-10)
	case tcell.KeyPgDn:
		p.list.move(10)
	case tcell.KeyEnter:
		p.pick()
	case tcell.KeyEscape:
		p.u.closePage(pagePicker)
	default:
		return ev
	}
	return nil
}

func (p *picker) pick() {
	i := p.list.current()
	if i < 0 || i >= len(p.shown) {
		return
	}
	it := p.items[p.shown[i]]
	if it.disabled {
		return
	}
	p.choose(it)
}

func (p *picker) open() {
	p.u.openPage(pagePicker, p.root, p.filter)
}
