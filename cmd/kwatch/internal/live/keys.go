package live

import "strings"

// KeyCode names a key that is not a character.
type KeyCode int

const (
	KeyRune KeyCode = iota // a character: Key.Rune
	KeyEnter
	KeyEsc
	KeyBackspace
	KeyCtrlC
	KeyCtrlU // clears the filter being typed
	KeyUp
	KeyDown
	KeyPgUp
	KeyPgDn
	KeyHome
	KeyEnd
)

// Key is one key press. The zero value is the rune 0, which does nothing.
type Key struct {
	Code KeyCode
	Rune rune // for KeyRune
}

// R is the key press of a character.
func R(r rune) Key { return Key{Code: KeyRune, Rune: r} }

// HandleKey applies a key press and reports whether the user asked to
// quit. Keys, by mode:
//   - table: q or Ctrl-C quit; / types a filter; n picks a namespace; s
//     sorts by name, status (failing first) or age (newest first); Esc
//     clears the filter and the namespace; ↑↓ j k move the selected row,
//     PgUp PgDn space b, Home End g G move it and scroll; Enter shows the
//     selected row's last changes.
//   - changes (the detail pane): ↑↓ j k, PgUp PgDn, Home End g G scroll;
//     Esc goes back to the table; q or Ctrl-C quit.
//   - filter: characters narrow the rows as they are typed (any cell or the
//     namespace contains the text, ignoring case); Backspace and Ctrl-U
//     erase; Enter keeps the filter; Esc clears it; Ctrl-C quits.
//   - namespace: ↑↓ j k move; Enter shows the namespace under the cursor
//     (or all); Esc goes back; q or Ctrl-C quit.
func (m *Model) HandleKey(k Key) (quit bool) {
	if k.Code == KeyCtrlC {
		return true
	}
	switch m.mode {
	case modeFilter:
		m.filterKey(k)
	case modeNamespaces:
		return m.pickerKey(k)
	case modeDetail:
		return m.detailKey(k)
	default:
		return m.tableKey(k)
	}
	return false
}

func (m *Model) tableKey(k Key) bool {
	switch k.Code {
	case KeyUp, KeyDown, KeyPgUp, KeyPgDn, KeyHome, KeyEnd:
		m.showCursor = true
	case KeyRune:
		if strings.ContainsRune("jk fbgG", k.Rune) {
			m.showCursor = true
		}
	}
	switch k.Code {
	case KeyRune:
		switch k.Rune {
		case 'q':
			return true
		case '/':
			m.mode, m.filter, m.offset, m.cursor = modeFilter, "", 0, 0
		case 's':
			m.SetOrder((m.order + 1) % orders)
			m.offset, m.cursor = 0, 0
		case 'n':
			if m.opts.Namespaced {
				m.mode, m.pick = modeNamespaces, m.namespaceIndex()
			}
		case 'j':
			m.cursor++
		case 'k':
			m.cursor--
		case ' ', 'f':
			m.cursor, m.offset = m.cursor+m.page, m.offset+m.page
		case 'b':
			m.cursor, m.offset = m.cursor-m.page, m.offset-m.page
		case 'g':
			m.cursor, m.offset = 0, 0
		case 'G':
			m.cursor, m.offset = m.Len(), m.Len() // Render clamps them to the last row and page
		}
	case KeyEsc:
		m.filter, m.namespace, m.offset, m.cursor = "", "", 0, 0
	case KeyEnter:
		m.mode, m.detailOffset, m.selected = modeDetail, 0, "" // Render picks the cursor's row
	case KeyUp:
		m.cursor--
	case KeyDown:
		m.cursor++
	case KeyPgUp:
		m.cursor, m.offset = m.cursor-m.page, m.offset-m.page
	case KeyPgDn:
		m.cursor, m.offset = m.cursor+m.page, m.offset+m.page
	case KeyHome:
		m.cursor, m.offset = 0, 0
	case KeyEnd:
		m.cursor, m.offset = m.Len(), m.Len()
	}
	m.offset, m.cursor = max(m.offset, 0), max(m.cursor, 0)
	return false
}

// detailKey scrolls the changes pane or leaves it.
func (m *Model) detailKey(k Key) bool {
	switch k.Code {
	case KeyRune:
		switch k.Rune {
		case 'q':
			return true
		case 'j':
			m.detailOffset++
		case 'k':
			m.detailOffset--
		case ' ', 'f':
			m.detailOffset += m.page
		case 'b':
			m.detailOffset -= m.page
		case 'g':
			m.detailOffset = 0
		case 'G':
			m.detailOffset = 1 << 30 // Render clamps it
		}
	case KeyEsc:
		m.mode = modeTable
	case KeyUp:
		m.detailOffset--
	case KeyDown:
		m.detailOffset++
	case KeyPgUp:
		m.detailOffset -= m.page
	case KeyPgDn:
		m.detailOffset += m.page
	case KeyHome:
		m.detailOffset = 0
	case KeyEnd:
		m.detailOffset = 1 << 30
	}
	m.detailOffset = max(m.detailOffset, 0)
	return false
}

func (m *Model) filterKey(k Key) {
	switch k.Code {
	case KeyRune:
		if k.Rune >= ' ' {
			m.filter += string(k.Rune)
		}
	case KeyBackspace:
		if r := []rune(m.filter); len(r) > 0 {
			m.filter = string(r[:len(r)-1])
		}
	case KeyCtrlU:
		m.filter = ""
	case KeyEnter:
		m.mode = modeTable
	case KeyEsc:
		m.mode, m.filter = modeTable, ""
	}
	m.offset, m.cursor = 0, 0
}

func (m *Model) pickerKey(k Key) bool {
	switch k.Code {
	case KeyRune:
		switch k.Rune {
		case 'q':
			return true
		case 'j':
			m.pick++
		case 'k':
			m.pick--
		}
	case KeyUp:
		m.pick--
	case KeyDown:
		m.pick++
	case KeyHome:
		m.pick = 0
	case KeyEnd:
		m.pick = len(m.perNamespace)
	case KeyEsc:
		m.mode = modeTable
	case KeyEnter:
		names := m.Namespaces()
		m.pick = min(max(m.pick, 0), len(names))
		m.namespace = ""
		if m.pick > 0 {
			m.namespace = names[m.pick-1]
		}
		m.mode, m.offset, m.cursor = modeTable, 0, 0
	}
	m.pick = min(max(m.pick, 0), len(m.perNamespace))
	return false
}

// namespaceIndex is the picked namespace's line in the picker (0: all).
func (m *Model) namespaceIndex() int {
	for i, n := range m.Namespaces() {
		if n == m.namespace {
			return i + 1
		}
	}
	return 0
}
