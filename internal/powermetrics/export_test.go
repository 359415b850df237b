package powermetrics

// TakesFastPath reports whether doc is in the shape the fast path reads.
func TakesFastPath(doc []byte) bool {
	var d document
	return fastParse(doc, &d)
}
