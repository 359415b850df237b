package fakeplug

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"time"
)

// serveKasa answers TP-Link's legacy protocol on ln: each request a
// 4-byte big-endian length and a JSON text under the autokey XOR cipher
// (first key 171), each answer the same. It returns stop.
func (f *Fake) serveKasa(ln net.Listener) func() {
	var (
		mu    sync.Mutex
		conns = map[net.Conn]bool{}
		wg    sync.WaitGroup
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns[c] = true
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() { mu.Lock(); delete(conns, c); mu.Unlock() }()
				defer c.Close()
				f.kasaConn(c)
			}()
		}
	}()
	return func() {
		ln.Close()
		mu.Lock()
		for c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	}
}

// kasaConn answers the requests of one connection.
func (f *Fake) kasaConn(c net.Conn) {
	for {
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		var head [4]byte
		if _, err := io.ReadFull(c, head[:]); err != nil {
			return
		}
		n := binary.BigEndian.Uint32(head[:])
		if n > 4096 {
			return
		}
		body := make([]byte, n)
		if _, err := io.ReadFull(c, body); err != nil {
			return
		}
		f.mu.Lock()
		f.reqs++
		f.mu.Unlock()
		if f.currentFaults().Hang {
			f.once.Do(func() { close(f.hung) })
			// Held until the client gives up and closes, or stop does.
			c.SetReadDeadline(time.Time{})
			io.Copy(io.Discard, c)
			return
		}
		if _, err := c.Write(f.kasaAnswer(string(KasaDecrypt(body)))); err != nil {
			return
		}
	}
}

// kasaAnswer is the framed, enciphered answer to a request.
func (f *Fake) kasaAnswer(req string) []byte {
	switch {
	case strings.Contains(req, "get_sysinfo"):
		model := "HS110(EU)"
		if f.currentFaults().Hostile == ControlText {
			model += "\x1b]0;owned\x07\n"
		}
		return KasaEncrypt([]byte(fmt.Sprintf(`{"system":{"get_sysinfo":{"sw_ver":"1.0.4 Build 191111 Rel.143500","hw_ver":"4.0","model":%s,"alias":"Mac","feature":"TIM:ENE","relay_state":1,"err_code":0}}}`, quote(model))))
	case strings.Contains(req, "get_realtime"):
		if f.currentFaults().Hostile == HugeBody {
			return binary.BigEndian.AppendUint32(nil, 1<<20)
		}
		watts, joules := f.state()
		if f.cfg.KasaOld {
			return KasaEncrypt([]byte(fmt.Sprintf(`{"emeter":{"get_realtime":{"current":0.128037,"power":%s,"total":%s,"voltage":230.9,"err_code":0}}}`,
				f.power(watts, 1, "%.6f"), fixed(counts(joules, 3600), 3))))
		}
		return KasaEncrypt([]byte(fmt.Sprintf(`{"emeter":{"get_realtime":{"current_ma":451,"power_mw":%s,"total_wh":%d,"voltage_mv":230837,"err_code":0}}}`,
			f.power(watts, 1000, "%.0f"), counts(joules, 3600))))
	}
	return KasaEncrypt([]byte(`{"err_code":-1,"err_msg":"module not support"}`))
}

// KasaEncrypt frames plain as the legacy protocol sends it: its length,
// then the text under the autokey XOR cipher.
func KasaEncrypt(plain []byte) []byte {
	out := binary.BigEndian.AppendUint32(make([]byte, 0, 4+len(plain)), uint32(len(plain)))
	key := byte(171)
	for _, b := range plain {
		key ^= b
		out = append(out, key)
	}
	return out
}

// KasaDecrypt is the text of an enciphered body (without its length).
func KasaDecrypt(cipher []byte) []byte {
	out := make([]byte, len(cipher))
	key := byte(171)
	for i, b := range cipher {
		out[i] = key ^ b
		key = b
	}
	return out
}
