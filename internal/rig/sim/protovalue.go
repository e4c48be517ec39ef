package sim

import (
	"encoding/base64"
	stdjson "encoding/json"
	"fmt"
	"time"
	"unicode/utf8"
)

// rfc3339Micro is how metav1.MicroTime writes itself.
const rfc3339Micro = "2006-01-02T15:04:05.000000Z07:00"

// isMessageKind reports whether values of kind k are messages on the wire.
func isMessageKind(k pbKind) bool { return k >= pbMsg }

// value writes one value of kind k: a string or bytes field's last occurrence, or a
// message read from the concatenation of spans (every occurrence of a singular
// message field: the generated code merges them; nil writes the zero message).
func (d *pbDecoder) value(k pbKind, ref uint16, spans []pbSpan, last pbSpan) error {
	switch k {
	case pbString:
		d.out = appendJSONString(d.out, string(d.buf[last.start:last.end]))
	case pbBytes:
		d.out = append(d.out, '"')
		d.out = base64.StdEncoding.AppendEncode(d.out, d.buf[last.start:last.end])
		d.out = append(d.out, '"')
	case pbMsg:
		return d.object(&pbMessages[ref], spans)
	case pbTime, pbMicroTime:
		t, err := d.timestamp(k, spans)
		if err != nil {
			return err
		}
		if t.IsZero() {
			d.out = append(d.out, "null"...)
			return nil
		}
		layout := time.RFC3339
		if k == pbMicroTime {
			layout = rfc3339Micro
		}
		d.out = append(d.out, '"')
		d.out = t.UTC().AppendFormat(d.out, layout)
		d.out = append(d.out, '"')
	case pbQuantity:
		return d.quantity(spans)
	case pbIntOrString:
		return d.intOrString(spans)
	case pbRawJSON:
		return d.rawJSON(spans)
	default:
		return &pbError{msg: fmt.Sprintf("sim: no decoder for kind %d", k), off: firstOffset(spans)}
	}
	return nil
}

// eachField calls each for every wire field of every span in turn; each must read
// (or skip) the field's value.
func (d *pbDecoder) eachField(spans []pbSpan, msg string, each func(r *pbReader, t pbTag) error) error {
	for _, s := range spans {
		r := pbReader{buf: d.buf, pos: s.start, end: s.end}
		for {
			t, ok, err := r.tag(msg)
			if err != nil {
				return err
			}
			if !ok {
				break
			}
			if err := each(&r, t); err != nil {
				return err
			}
		}
	}
	return nil
}

// wantWire checks a known field's wire type; goName names the field in the error as
// the generated code does.
func wantWire(t pbTag, wire int, goName string) error {
	if t.wire != wire {
		return &pbError{msg: fmt.Sprintf("proto: wrong wireType = %d for field %s", t.wire, goName), off: t.at}
	}
	return nil
}

// timestamp reads a metav1.Time or MicroTime. Each occurrence replaces the one
// before, and an empty one is the zero time, as their Unmarshal methods do; Time
// keeps whole seconds only, MicroTime truncates to microseconds.
func (d *pbDecoder) timestamp(k pbKind, spans []pbSpan) (time.Time, error) {
	var t time.Time
	for _, s := range spans {
		var sec int64
		var nanos int32
		err := d.eachField([]pbSpan{s}, "Timestamp", func(r *pbReader, tg pbTag) error {
			if tg.num != 1 && tg.num != 2 {
				return r.skip(tg)
			}
			if err := wantWire(tg, wireVarint, pick(tg.num == 1, "Seconds", "Nanos")); err != nil {
				return err
			}
			v, err := r.varint()
			if tg.num == 1 {
				sec = int64(v)
			} else {
				nanos = int32(v)
			}
			return err
		})
		switch {
		case err != nil:
			return t, err
		case s.end == s.start:
			t = time.Time{}
		case k == pbTime:
			t = time.Unix(sec, 0)
		default:
			t = time.Unix(sec, int64(time.Duration(nanos).Truncate(time.Microsecond)))
		}
	}
	return t, nil
}

// quantity writes a resource.Quantity: its string, checked as the real server
// parses it, or "0" when absent. (The real server writes the canonical form, "1"
// for "1000m"; clients send that form, and the simulator keeps what was sent, as
// it does for JSON bodies.)
func (d *pbDecoder) quantity(spans []pbSpan) error {
	q := "0"
	err := d.eachField(spans, "Quantity", func(r *pbReader, t pbTag) error {
		if t.num != 1 {
			return r.skip(t)
		}
		if err := wantWire(t, wireBytes, "String_"); err != nil {
			return err
		}
		s, err := r.bytes()
		if err != nil {
			return err
		}
		q = string(d.buf[s.start:s.end])
		if _, err := parseQuantity(q); err != nil {
			return &pbError{msg: err.Error(), off: s.start}
		}
		return nil
	})
	if err != nil {
		return err
	}
	d.out = appendJSONString(d.out, q)
	return nil
}

// intOrString writes an intstr.IntOrString: its intVal when type is 0, its strVal
// when type is 1.
func (d *pbDecoder) intOrString(spans []pbSpan) error {
	var typ, intVal uint64
	var str pbSpan
	err := d.eachField(spans, "IntOrString", func(r *pbReader, t pbTag) error {
		var err error
		switch t.num {
		case 1, 2:
			if err = wantWire(t, wireVarint, pick(t.num == 1, "Type", "IntVal")); err != nil {
				return err
			}
			v, err := r.varint()
			if t.num == 1 {
				typ = v
			} else {
				intVal = v
			}
			return err
		case 3:
			if err = wantWire(t, wireBytes, "StrVal"); err != nil {
				return err
			}
			str, err = r.bytes()
			return err
		}
		return r.skip(t)
	})
	switch {
	case err != nil:
		return err
	case typ == 0:
		d.varintValue(pbInt32, intVal)
	case typ == 1:
		d.out = appendJSONString(d.out, string(d.buf[str.start:str.end]))
	default:
		return &pbError{msg: fmt.Sprintf("impossible IntOrString.Type %d (0 is an int, 1 a string)", int64(typ)), off: firstOffset(spans)}
	}
	return nil
}

// rawJSON writes a FieldsV1 or RawExtension: its raw bytes, which must be JSON, or
// null when empty.
func (d *pbDecoder) rawJSON(spans []pbSpan) error {
	var raw pbSpan
	err := d.eachField(spans, "RawExtension", func(r *pbReader, t pbTag) error {
		if t.num != 1 {
			return r.skip(t)
		}
		if err := wantWire(t, wireBytes, "Raw"); err != nil {
			return err
		}
		var err error
		raw, err = r.bytes()
		return err
	})
	if err != nil {
		return err
	}
	b := d.buf[raw.start:raw.end]
	switch {
	case len(b) == 0:
		d.out = append(d.out, "null"...)
	case !stdjson.Valid(b):
		return &pbError{msg: "raw bytes are not JSON (the simulator reads no other embedded encoding)", off: raw.start}
	default:
		d.out = append(d.out, b...)
	}
	return nil
}

func pick(cond bool, a, b string) string {
	if cond {
		return a
	}
	return b
}

// appendJSONString writes s as a JSON string, each byte that is not valid UTF-8
// replaced by U+FFFD, as encoding/json does.
func appendJSONString(b []byte, s string) []byte {
	if utf8.ValidString(s) {
		return appendQuoted(b, s)
	}
	fixed := make([]byte, 0, len(s)+8)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			fixed = utf8.AppendRune(fixed, utf8.RuneError)
		} else {
			fixed = append(fixed, s[i:i+n]...)
		}
		i += n
	}
	return appendQuoted(b, string(fixed))
}
