// HTTP/1.1 message syntax for the exporter's server: where a head ends
// (also when it arrives a byte at a time), what a request line and header
// fields say, what is refused as malformed, Accept-Encoding, and the head of
// an answer.
#include "apps/exporter/http_message.h"

#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace ckpt {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

TEST(HttpMessage, FindsTheEndOfAHead) {
  const std::string crlf = "GET / HTTP/1.1\r\nHost: x\r\n\r\nnext";
  EXPECT_EQ(find_head_end(crlf, 0), crlf.size() - 4);
  const std::string lf = "GET / HTTP/1.1\nHost: x\n\nnext";
  EXPECT_EQ(find_head_end(lf, 0), lf.size() - 4);
  EXPECT_EQ(find_head_end("GET / HTTP/1.1\r\nHost: x\r\n", 0), std::string::npos);
  EXPECT_EQ(find_head_end("GET / HTTP/1.1\r\nHost: x\r\n\r", 0), std::string::npos);
}

TEST(HttpMessage, FindsTheEndOfAHeadThatArrivesAByteAtATime) {
  const std::string head = "GET /metrics HTTP/1.1\r\nHost: x\r\nAccept: */*\r\n\r\n";
  std::string buffer;
  size_t scanned = 0;
  size_t found = std::string::npos;
  for (char c : head) {
    buffer += c;
    found = find_head_end(buffer, scanned);
    if (found != std::string::npos) break;
    scanned = buffer.size();
  }
  EXPECT_EQ(found, head.size());
}

TEST(HttpMessage, SkipsEmptyLinesBeforeARequest) {
  EXPECT_EQ(leading_empty_lines("\r\n\r\nGET"), 4u);
  EXPECT_EQ(leading_empty_lines("GET"), 0u);
}

TEST(HttpMessage, ParsesARequest) {
  const auto p = parse_request_head(
      "GET /metrics?debug=1 HTTP/1.1\r\nHost: node:9464\r\nAccept-Encoding: gzip\r\n"
      "User-Agent: Prometheus/2.42.0\r\n\r\n");
  ASSERT_EQ(p.error_status, 0) << p.why;
  EXPECT_EQ(p.head.method, "GET");
  EXPECT_EQ(p.head.path, "/metrics");
  EXPECT_EQ(p.head.minor_version, 1);
  EXPECT_TRUE(p.head.keep_alive);
  EXPECT_TRUE(p.head.accepts_gzip);
  EXPECT_FALSE(p.head.has_body);
}

TEST(HttpMessage, AbsoluteFormIsReducedToItsPath) {
  EXPECT_EQ(parse_request_head("GET http://node:9464/metrics HTTP/1.1\r\n\r\n").head.path,
            "/metrics");
  EXPECT_EQ(parse_request_head("GET http://node:9464 HTTP/1.1\r\n\r\n").head.path, "/");
}

TEST(HttpMessage, ConnectionAndVersionDecideKeepAlive) {
  EXPECT_FALSE(parse_request_head("GET / HTTP/1.1\r\nConnection: close\r\n\r\n").head.keep_alive);
  EXPECT_FALSE(
      parse_request_head("GET / HTTP/1.1\r\nconnection: TE, Close\r\n\r\n").head.keep_alive);
  EXPECT_FALSE(parse_request_head("GET / HTTP/1.0\r\n\r\n").head.keep_alive);
  EXPECT_TRUE(
      parse_request_head("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n").head.keep_alive);
  EXPECT_TRUE(parse_request_head("GET / HTTP/1.1\r\n\r\n").head.keep_alive);
}

TEST(HttpMessage, ABodyIsNoticed) {
  EXPECT_TRUE(parse_request_head("POST / HTTP/1.1\r\nContent-Length: 3\r\n\r\n").head.has_body);
  EXPECT_FALSE(parse_request_head("POST / HTTP/1.1\r\nContent-Length: 0\r\n\r\n").head.has_body);
  EXPECT_TRUE(
      parse_request_head("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n").head.has_body);
}

struct Malformed {
  const char* head;
  int status;
};

class HttpMessageMalformed : public ::testing::TestWithParam<Malformed> {};

TEST_P(HttpMessageMalformed, IsRefusedWithItsStatus) {
  const auto p = parse_request_head(GetParam().head);
  EXPECT_EQ(p.error_status, GetParam().status) << GetParam().head;
  EXPECT_FALSE(p.why.empty());
}

INSTANTIATE_TEST_SUITE_P(
    Heads, HttpMessageMalformed,
    ::testing::Values(
        Malformed{"\r\n", 400}, Malformed{"GARBAGE\r\n\r\n", 400},
        Malformed{"GET / HTTP/1.1 extra\r\n\r\n", 400}, Malformed{"GET  / HTTP/1.1\r\n\r\n", 400},
        Malformed{"G@T / HTTP/1.1\r\n\r\n", 400}, Malformed{"GET / HTTQ/1.1\r\n\r\n", 400},
        Malformed{"GET / HTTP/11\r\n\r\n", 400}, Malformed{"GET relative HTTP/1.1\r\n\r\n", 400},
        Malformed{"GET /\x01 HTTP/1.1\r\n\r\n", 400},
        Malformed{"GET / HTTP/1.1\r\nNo colon\r\n\r\n", 400},
        Malformed{"GET / HTTP/1.1\r\nBad Name: x\r\n\r\n", 400},
        Malformed{"GET / HTTP/1.1\r\nA: b\r\n folded\r\n\r\n", 400},
        Malformed{"GET / HTTP/1.1\r\nA: b\x7f\r\n\r\n", 400},
        Malformed{"GET / HTTP/1.1\r\nContent-Length: 1x\r\n\r\n", 400},
        Malformed{"GET / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", 400},
        Malformed{"GET / HTTP/2.0\r\n\r\n", 505}, Malformed{"GET / HTTP/0.9\r\n\r\n", 505}));

TEST(HttpMessage, AcceptEncoding) {
  EXPECT_TRUE(accepts_gzip("gzip"));
  EXPECT_TRUE(accepts_gzip("GZip"));
  EXPECT_TRUE(accepts_gzip("deflate, gzip;q=0.5"));
  EXPECT_TRUE(accepts_gzip("x-gzip"));
  EXPECT_TRUE(accepts_gzip("*"));
  EXPECT_TRUE(accepts_gzip("gzip;q=0.001"));
  EXPECT_FALSE(accepts_gzip(""));
  EXPECT_FALSE(accepts_gzip("identity"));
  EXPECT_FALSE(accepts_gzip("gzip;q=0"));
  EXPECT_FALSE(accepts_gzip("gzip; q=0.000"));
  EXPECT_FALSE(accepts_gzip("*;q=0"));
  EXPECT_FALSE(accepts_gzip("gzip;q=0, *")) << "gzip refused by name, whatever * says";
  EXPECT_FALSE(accepts_gzip("gzipped"));
}

TEST(HttpMessage, FormatsAnAnswerHead) {
  ResponseHead h;
  h.status = 200;
  h.content_type = "text/plain; version=0.0.4; charset=utf-8";
  h.content_encoding = "gzip";
  h.content_length = 1234;
  const std::string out = format_response_head(h);
  EXPECT_THAT(out, StartsWith("HTTP/1.1 200 OK\r\nDate: "));
  EXPECT_THAT(out, HasSubstr("\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n"));
  EXPECT_THAT(out, HasSubstr("\r\nContent-Encoding: gzip\r\n"));
  EXPECT_THAT(out, HasSubstr("\r\nContent-Length: 1234\r\n"));
  EXPECT_THAT(out, Not(HasSubstr("Connection:")));
  EXPECT_TRUE(out.ends_with("\r\n\r\n"));

  h.keep_alive = false;
  EXPECT_THAT(format_response_head(h), HasSubstr("\r\nConnection: close\r\n"));
  h.keep_alive = true;
  h.minor_version = 0;
  EXPECT_THAT(format_response_head(h), HasSubstr("\r\nConnection: keep-alive\r\n"));
  h.status = 405;
  h.allow_get_head = true;
  EXPECT_THAT(format_response_head(h), HasSubstr("405 Method Not Allowed\r\n"));
  EXPECT_THAT(format_response_head(h), HasSubstr("\r\nAllow: GET, HEAD\r\n"));
}

}  // namespace
}  // namespace ckpt
