package wall

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"time"
)

// kasaResolution is one count of a Kasa plug's counter: whole
// watt-hours (total_wh; the older total in kWh shows more digits but
// is no finer).
const kasaResolution = 3600 // J

// kasa is a TP-Link Kasa plug that speaks the legacy protocol: a TCP
// connection to port 9999, a 4-byte big-endian length before a JSON
// request enciphered with an autokey XOR starting at 171, the answer
// framed the same way. Newer plugs speak KLAP or TPAP instead, which
// exopower does not.
type kasa struct {
	addr, host string
	timeout    time.Duration
	secrets    *secrets
	info       Info
	// done ends every read at Close.
	done  context.Context
	close context.CancelFunc
}

// kasaKey is the cipher's first key.
const kasaKey = 171

func kasaEncrypt(plain []byte) []byte {
	out := make([]byte, 4+len(plain))
	binary.BigEndian.PutUint32(out, uint32(len(plain)))
	key := byte(kasaKey)
	for i, b := range plain {
		key ^= b
		out[4+i] = key
	}
	return out
}

func kasaDecrypt(cipher []byte) []byte {
	out := make([]byte, len(cipher))
	key := byte(kasaKey)
	for i, b := range cipher {
		out[i] = key ^ b
		key = b
	}
	return out
}

// query sends one request and reads its answer, on a connection of its
// own, within the timeout.
func (p *kasa) query(ctx context.Context, request string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	stopClose := context.AfterFunc(p.done, cancel)
	defer stopClose()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", p.host)
	if err != nil {
		return nil, p.failed(ctx, err)
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		conn.SetDeadline(dl)
	}
	// The caller's end, or Close, ends the read at once.
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	if _, err := conn.Write(kasaEncrypt([]byte(request))); err != nil {
		return nil, p.failed(ctx, err)
	}
	var head [4]byte
	if _, err := io.ReadFull(conn, head[:]); err != nil {
		return nil, p.failed(ctx, err)
	}
	n := binary.BigEndian.Uint32(head[:])
	if n > maxBody {
		return nil, fmt.Errorf("%s: %w", p.addr, errTooLarge)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(conn, body); err != nil {
		return nil, p.failed(ctx, err)
	}
	return kasaDecrypt(body), nil
}

func (p *kasa) failed(ctx context.Context, err error) error {
	switch {
	case p.done.Err() != nil:
		return fmt.Errorf("%s: %w", p.addr, ErrClosed)
	case ctx.Err() == context.DeadlineExceeded, ctx.Err() == nil && errors.Is(err, os.ErrDeadlineExceeded):
		// The connection's deadline is the context's, and may come
		// first.
		return fmt.Errorf("%s: no answer within %v: %w", p.addr, p.timeout, context.DeadlineExceeded)
	case ctx.Err() != nil:
		return fmt.Errorf("%s: %w", p.addr, ctx.Err())
	}
	return fmt.Errorf("%s: %s", p.addr, p.secrets.text(err.Error()))
}

// unsupported is the error of a device that does not answer the legacy
// protocol.
func (p *kasa) unsupported(err error) error {
	if errors.Is(err, ErrClosed) {
		return err
	}
	return &UnsupportedError{Address: p.addr, Reason: fmt.Sprintf("%s; a Kasa or Tapo plug that does not answer TP-Link's legacy protocol on port 9999 speaks KLAP or TPAP, which exopower does not support yet: read the plug through Home Assistant's TP-Link integration instead, as --wall ha://HOST:8123/sensor.plug_energy?power=sensor.plug_power",
		p.secrets.text(err.Error()))}
}

func openKasa(ctx context.Context, t Target) (Plug, error) {
	p := &kasa{addr: t.String(), host: t.Host, timeout: t.timeout(), secrets: newSecrets(Credentials{})}
	p.done, p.close = context.WithCancel(context.Background())
	b, err := p.query(ctx, `{"system":{"get_sysinfo":{}}}`)
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		return nil, p.unsupported(err)
	}
	var s struct {
		System struct {
			Info *struct {
				Model, Alias string
				SwVer        string `json:"sw_ver"`
				ErrCode      int    `json:"err_code"`
			} `json:"get_sysinfo"`
		} `json:"system"`
	}
	if json.Unmarshal(b, &s) != nil || s.System.Info == nil {
		return nil, p.unsupported(errors.New("its answer to get_sysinfo is not the legacy protocol's"))
	}
	i := s.System.Info
	p.info = Info{
		Kind: KindKasa, Model: p.secrets.text(i.Model), Firmware: p.secrets.text(i.SwVer), Name: p.secrets.text(i.Alias),
		Address: p.addr, CounterResolution: kasaResolution, HasCounter: true, HasPower: true,
	}
	if _, err := p.Read(ctx); err != nil {
		return nil, err
	}
	return p, nil
}

func (p *kasa) Info() Info { return p.info }

func (p *kasa) Read(ctx context.Context) (Reading, error) {
	b, err := p.query(ctx, `{"emeter":{"get_realtime":{}}}`)
	if err != nil {
		return Reading{}, err
	}
	var a struct {
		Emeter struct {
			Realtime *struct {
				PowerMW *float64 `json:"power_mw"`
				TotalWh *float64 `json:"total_wh"`
				Power   *float64 `json:"power"`
				Total   *float64 `json:"total"`
				ErrCode int      `json:"err_code"`
				ErrMsg  string   `json:"err_msg"`
			} `json:"get_realtime"`
		} `json:"emeter"`
	}
	if err := json.Unmarshal(b, &a); err != nil {
		return Reading{}, fmt.Errorf("%s: get_realtime: its answer is not the JSON expected: %s", p.addr, p.secrets.text(err.Error()))
	}
	rt := a.Emeter.Realtime
	switch {
	case rt == nil:
		return Reading{}, fmt.Errorf("%s: get_realtime: no answer of the energy meter: is it a Kasa plug that meters (HS110, KP115, EP25)?", p.addr)
	case rt.ErrCode != 0:
		return Reading{}, fmt.Errorf("%s: get_realtime: error %d: %s", p.addr, rt.ErrCode, p.secrets.text(rt.ErrMsg))
	case rt.PowerMW != nil && rt.TotalWh != nil:
		return p.reading(Reading{Power: *rt.PowerMW / 1000, HasPower: true, Counter: *rt.TotalWh * 3600, HasCounter: true})
	case rt.Power != nil && rt.Total != nil:
		return p.reading(Reading{Power: *rt.Power, HasPower: true, Counter: *rt.Total * 3.6e6, HasCounter: true})
	}
	return Reading{}, fmt.Errorf("%s: get_realtime: its answer has neither power_mw and total_wh nor power and total", p.addr)
}

func (p *kasa) reading(r Reading) (Reading, error) {
	if err := check(r); err != nil {
		return Reading{}, fmt.Errorf("%s: get_realtime: %w", p.addr, err)
	}
	return r, nil
}

// Close ends the read under way at once.
func (p *kasa) Close() error {
	p.close()
	return nil
}
