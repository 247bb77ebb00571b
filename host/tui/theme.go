package tui

import "github.com/gdamore/tcell/v2"

// theme holds every style the UI draws with. Without colour, styles keep
// only attributes, so the UI stays legible on a monochrome terminal.
type theme struct {
	base      tcell.Style
	dim       tcell.Style
	bold      tcell.Style
	accent    tcell.Style // the dsh marker, headings
	user      tcell.Style // the user's prompts
	heading   tcell.Style
	code      tcell.Style // code blocks
	inline    tcell.Style // `inline code`
	quote     tcell.Style
	link      tcell.Style
	reasoning tcell.Style
	escape    tcell.Style // visible escapes of control characters
	ok        tcell.Style
	fail      tcell.Style
	warn      tcell.Style
	running   tcell.Style
	added     tcell.Style
	removed   tcell.Style
	hunk      tcell.Style
	bar       tcell.Style // header and status bars
	barDim    tcell.Style
	selected  tcell.Style
	match     tcell.Style // search terms in snippets
	highlight tcell.Style // the search hit in the viewer
	button    tcell.Style
	buttonOn  tcell.Style
}

func newTheme(color bool) *theme {
	d := tcell.StyleDefault
	if !color {
		return &theme{
			base: d, dim: d.Dim(true), bold: d.Bold(true), accent: d.Bold(true), user: d.Bold(true),
			heading: d.Bold(true).Underline(true), code: d, inline: d.Bold(true), quote: d.Dim(true),
			link: d.Underline(true), reasoning: d.Dim(true).Italic(true), escape: d.Reverse(true),
			ok: d.Bold(true), fail: d.Bold(true), warn: d.Bold(true), running: d.Dim(true),
			added: d.Bold(true), removed: d.Dim(true), hunk: d.Dim(true),
			bar: d.Reverse(true), barDim: d.Reverse(true), selected: d.Reverse(true),
			match: d.Bold(true).Underline(true), highlight: d.Reverse(true),
			button: d, buttonOn: d.Reverse(true),
		}
	}
	return &theme{
		base:      d,
		dim:       d.Foreground(tcell.ColorGray),
		bold:      d.Bold(true),
		accent:    d.Foreground(tcell.ColorDodgerBlue).Bold(true),
		user:      d.Foreground(tcell.ColorWhite).Bold(true),
		heading:   d.Foreground(tcell.ColorDodgerBlue).Bold(true),
		code:      d.Foreground(tcell.ColorLightGreen),
		inline:    d.Foreground(tcell.ColorLightSkyBlue),
		quote:     d.Foreground(tcell.ColorSilver).Italic(true),
		link:      d.Foreground(tcell.ColorLightSkyBlue).Underline(true),
		reasoning: d.Foreground(tcell.ColorGray).Italic(true),
		escape:    d.Foreground(tcell.ColorOrange).Reverse(true),
		ok:        d.Foreground(tcell.ColorGreen),
		fail:      d.Foreground(tcell.ColorRed),
		warn:      d.Foreground(tcell.ColorYellow),
		running:   d.Foreground(tcell.ColorYellow),
		added:     d.Foreground(tcell.ColorGreen),
		removed:   d.Foreground(tcell.ColorRed),
		hunk:      d.Foreground(tcell.ColorTeal),
		bar:       d.Background(tcell.ColorDarkSlateGray).Foreground(tcell.ColorWhite),
		barDim:    d.Background(tcell.ColorDarkSlateGray).Foreground(tcell.ColorSilver),
		selected:  d.Background(tcell.ColorNavy).Foreground(tcell.ColorWhite),
		match:     d.Foreground(tcell.ColorYellow).Bold(true),
		highlight: d.Background(tcell.Color236),
		button:    d.Foreground(tcell.ColorSilver),
		buttonOn:  d.Background(tcell.ColorDodgerBlue).Foreground(tcell.ColorWhite).Bold(true),
	}
}
