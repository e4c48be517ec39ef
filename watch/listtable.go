package watch

import (
	"fmt"
)

// tableRowHead and tableRowTail wrap one row of a Table list as the
// one-row Table a Table watch event carries.
const (
	tableRowHead = `{"kind":"Table","apiVersion":"meta.k8s.io/v1","columnDefinitions":`
	tableRowMid  = `,"rows":[`
	tableRowTail = `]}`
)

// columnDefinitions keeps a Table's column definitions for its first row.
func (d *listDecoder) columnDefinitions() error {
	v, _, err := d.f.value()
	if err != nil {
		return err
	}
	d.columns = append(d.columns[:0], v...)
	return nil
}

// decodeRows reads a Table's rows array, passing each row to each as a
// one-row Table decoded into a fresh T.
func decodeRows[T Object](d *listDecoder, each func(T) error) error {
	var wrapped []byte
	return d.eachElement("table rows", "rows", "a row", func(i int) error {
		v, off, err := d.f.value()
		if err != nil {
			return err
		}
		if v[0] != '{' {
			return &DecodeError{Offset: off, What: fmt.Sprintf("table row %d", i),
				Err: fmt.Errorf("%w %s; want an object", ErrUnexpectedByte, quoteByte(v[0]))}
		}
		cols := "[]"
		if i == 0 && d.columns != nil {
			cols = string(d.columns)
		}
		wrapped = append(append(append(append(append(wrapped[:0], tableRowHead...), cols...), tableRowMid...), v...), tableRowTail...)
		obj, err := decodeBytes[T](d, wrapped, off, "table row "+fmt.Sprint(i))
		if err != nil {
			return err
		}
		return each(obj)
	})
}
