package parse

// The stream parsers (cilium-dbg monitor, hubble observe, tcpdump) read
// what a command prints a line at a time, so that a capture can hand each
// line over as it comes (Add) and `labrun parse` can read a whole output
// the same way (parseStream).

// streamResult is a stream parser's result: Add reads one line into it,
// saying why it cannot ("" when it could); Events counts what it holds.
type streamResult[T any] interface {
	*T
	Add(line string) string
	Events() int
}

// parseStream reads every line of text into start, as a capture would
// have added them, refusing a line Add cannot read with its number and
// the reason, and an output cut mid-line (refuseCut) with the count of
// events before the cut. noun names the events in that message; self is
// the kind's parser, which refuseCut calls on the complete lines.
func parseStream[T any, P streamResult[T]](kind, noun, text string, start T, self func(string) (T, error)) (T, error) {
	var zero T
	if err := refuseCut(kind, noun, text, self, func(v T) int { return P(&v).Events() }); err != nil {
		return zero, err
	}
	v := start
	r := newLineReader(text)
	for {
		line, ok := r.next()
		if !ok {
			break
		}
		if isBlank(line) {
			continue
		}
		if why := P(&v).Add(line); why != "" {
			return zero, newError(kind, r.num, line, why)
		}
	}
	return v, nil
}
