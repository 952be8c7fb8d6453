package trace

import (
	"bufio"
	"io"
	"strconv"
)

// Write writes requests as Mooncake JSONL in the reference layout
// ({"timestamp": 0, "input_length": 6758, "output_length": 500, "hash_ids": [0, 1]}),
// one request per line. It does not validate; Parse does.
func Write(w io.Writer, reqs []Request) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	var b []byte
	for i := range reqs {
		r := &reqs[i]
		b = append(b[:0], `{"timestamp": `...)
		b = strconv.AppendInt(b, r.TimestampMS, 10)
		b = append(b, `, "input_length": `...)
		b = strconv.AppendInt(b, int64(r.InputLength), 10)
		b = append(b, `, "output_length": `...)
		b = strconv.AppendInt(b, int64(r.OutputLength), 10)
		b = append(b, `, "hash_ids": [`...)
		for j := range r.HashIDs {
			if j > 0 {
				b = append(b, ", "...)
			}
			b = strconv.AppendInt(b, r.ID(j), 10)
		}
		b = append(b, "]}\n"...)
		if _, err := bw.Write(b); err != nil {
			return err
		}
	}
	return bw.Flush()
}
