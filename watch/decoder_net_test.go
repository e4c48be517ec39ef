package watch

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// serveChunked answers one request on ln with a hand-made HTTP/1.1 chunked
// response whose chunks cut body at random points, each written on its own.
func serveChunked(ln net.Listener, body []byte, seed uint64) error {
	conn, err := ln.Accept()
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := http.ReadRequest(bufio.NewReader(conn)); err != nil {
		return err
	}
	head := "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
	if _, err := io.WriteString(conn, head); err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(seed, 2))
	for len(body) > 0 {
		n := min(1+rng.IntN(3000), len(body))
		if rng.IntN(4) == 0 {
			n = min(1+rng.IntN(8), len(body))
		}
		if _, err := fmt.Fprintf(conn, "%x\r\n%s\r\n", n, body[:n]); err != nil {
			return err
		}
		body = body[n:]
	}
	_, err = io.WriteString(conn, "0\r\n\r\n")
	return err
}

func TestDecoderOverChunkedHTTP(t *testing.T) {
	body := append(allCaptures(t), syntheticStream(120, 5)...)
	want, err := decodeAll[*testPod](bytes.NewReader(body), DecoderOptions{})
	require.ErrorIs(t, err, io.EOF)
	for seed := range uint64(4) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		served := make(chan error, 1)
		go func() { served <- serveChunked(ln, body, seed) }()

		tr := &http.Transport{DisableKeepAlives: true}
		client := &http.Client{Transport: tr}
		resp, err := client.Get("http://" + ln.Addr().String() + "/api/v1/pods?watch=1")
		require.NoError(t, err)
		require.Equal(t, []string{"chunked"}, resp.TransferEncoding)
		got, err := decodeAll[*testPod](resp.Body, DecoderOptions{Parallelism: int(seed%3) + 1})
		assert.ErrorIs(t, err, io.EOF, "seed %d", seed)
		assert.Equal(t, summaries(want), summaries(got), "seed %d", seed)
		require.NoError(t, resp.Body.Close())
		require.NoError(t, <-served)
		require.NoError(t, ln.Close())
		tr.CloseIdleConnections()
	}
}
