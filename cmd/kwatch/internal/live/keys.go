package live

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
//     clears the filter and the namespace; ↑↓ j k, PgUp PgDn space b,
//     Home End g G scroll.
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
	default:
		return m.tableKey(k)
	}
	return false
}

func (m *Model) tableKey(k Key) bool {
	switch k.Code {
	case KeyRune:
		switch k.Rune {
		case 'q':
			return true
		case '/':
			m.mode, m.filter, m.offset = modeFilter, "", 0
		case 's':
			m.SetOrder((m.order + 1) % orders)
			m.offset = 0
		case 'n':
			if m.opts.Namespaced {
				m.mode, m.pick = modeNamespaces, m.namespaceIndex()
			}
		case 'j':
			m.offset++
		case 'k':
			m.offset--
		case ' ', 'f':
			m.offset += m.page
		case 'b':
			m.offset -= m.page
		case 'g':
			m.offset = 0
		case 'G':
			m.offset = m.Len() // Render clamps it to the last page
		}
	case KeyEsc:
		m.filter, m.namespace, m.offset = "", "", 0
	case KeyUp:
		m.offset--
	case KeyDown:
		m.offset++
	case KeyPgUp:
		m.offset -= m.page
	case KeyPgDn:
		m.offset += m.page
	case KeyHome:
		m.offset = 0
	case KeyEnd:
		m.offset = m.Len()
	}
	m.offset = max(m.offset, 0)
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
	m.offset = 0
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
		m.mode, m.offset = modeTable, 0
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
