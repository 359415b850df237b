package wire

import (
	"math"
	"reflect"
)

var numType = reflect.TypeFor[Num]()

// Finite makes every figure in v, a pointer to a JSON document, one that
// JSON can write, and returns how many it changed: a *Num that is NaN or
// infinite becomes nil (null: not known), a Num 0. A document is then
// always written, whatever one figure came to; the caller says that
// figures were changed, so that no 0 passes for a measurement.
func Finite(v any) int {
	return finite(reflect.ValueOf(v))
}

func finite(v reflect.Value) int {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return 0
		}
		if e := v.Elem(); e.Type() == numType && bad(e) {
			if v.CanSet() {
				v.SetZero()
			} else {
				e.SetFloat(0)
			}
			return 1
		}
		return finite(v.Elem())
	case reflect.Interface:
		return finite(v.Elem())
	case reflect.Struct:
		n := 0
		for i := range v.NumField() {
			if f := v.Field(i); f.CanSet() {
				n += finite(f)
			}
		}
		return n
	case reflect.Slice, reflect.Array:
		n := 0
		for i := range v.Len() {
			n += finite(v.Index(i))
		}
		return n
	case reflect.Map:
		n := 0
		for it := v.MapRange(); it.Next(); {
			if e := it.Value(); e.Type() == numType && bad(e) {
				v.SetMapIndex(it.Key(), reflect.ValueOf(Num(0)))
				n++
			} else if e.Kind() == reflect.Pointer {
				n += finite(e)
			}
		}
		return n
	case reflect.Float64:
		if v.Type() == numType && bad(v) && v.CanSet() {
			v.SetFloat(0)
			return 1
		}
	}
	return 0
}

func bad(v reflect.Value) bool {
	f := v.Float()
	return math.IsNaN(f) || math.IsInf(f, 0)
}
