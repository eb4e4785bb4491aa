// Answers as Prometheus 2.42 sends them (captured from a backfilled server).
#include "analysis/fleet/prometheus/api_decode.h"

#include <cmath>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace ckpt::fleet::api {
namespace {

using ::testing::HasSubstr;

TEST(ApiDecode, MatrixWithNaNAndInfStrings) {
  const char* body =
      R"j({"status":"success","data":{"resultType":"matrix","result":[{"metric":{"__name__":"up","instance":"n1"},"values":[[1769860800,"1"],[1769860860,"NaN"],[1769860920,"+Inf"],[1769860980,"-Inf"],[1769861040,"2.5e+09"]]}]}})j";
  auto data = decode_envelope(body, 200, "test");
  ASSERT_TRUE(data) << data.error().message;
  auto series = decode_query_data(*data);
  ASSERT_TRUE(series) << series.error().message;
  ASSERT_EQ(series->size(), 1U);
  const auto& s = (*series)[0];
  EXPECT_EQ(s.labels.at("__name__"), "up");
  EXPECT_EQ(s.labels.at("instance"), "n1");
  ASSERT_EQ(s.samples.size(), 5U);
  EXPECT_DOUBLE_EQ(s.samples[0].time_s, 1769860800);
  EXPECT_DOUBLE_EQ(s.samples[0].value, 1);
  EXPECT_TRUE(std::isnan(s.samples[1].value));
  EXPECT_TRUE(std::isinf(s.samples[2].value) && s.samples[2].value > 0);
  EXPECT_TRUE(std::isinf(s.samples[3].value) && s.samples[3].value < 0);
  EXPECT_DOUBLE_EQ(s.samples[4].value, 2.5e9);
}

TEST(ApiDecode, VectorAndScalar) {
  auto data = decode_envelope(
      R"j({"status":"success","data":{"resultType":"vector","result":[{"metric":{"direction":"load"},"value":[1769860800.5,"7e+11"]},{"metric":{},"value":[1769860800.5,"0"]}]}})j",
      200, "t");
  ASSERT_TRUE(data);
  auto v = decode_query_data(*data);
  ASSERT_TRUE(v);
  ASSERT_EQ(v->size(), 2U);
  EXPECT_EQ((*v)[0].labels.at("direction"), "load");
  EXPECT_DOUBLE_EQ((*v)[0].samples.at(0).time_s, 1769860800.5);
  EXPECT_DOUBLE_EQ((*v)[0].samples.at(0).value, 7e11);
  EXPECT_TRUE((*v)[1].labels.empty());
  auto scalar = decode_envelope(
      R"j({"status":"success","data":{"resultType":"scalar","result":[1769860800,"42"]}})j", 200,
      "t");
  ASSERT_TRUE(scalar);
  auto s = decode_query_data(*scalar);
  ASSERT_TRUE(s);
  ASSERT_EQ(s->size(), 1U);
  EXPECT_DOUBLE_EQ((*s)[0].samples.at(0).value, 42);
}

TEST(ApiDecode, ErrorAnswersKeepTheApiReason) {
  auto bad = decode_envelope(
      R"j({"status":"error","errorType":"bad_data","error":"exceeded maximum resolution of 11,000 points per timeseries. Try decreasing the query resolution (?step=XX)"})j",
      400, "Prometheus at http://h:9090/api/v1/query_range");
  ASSERT_FALSE(bad);
  EXPECT_THAT(bad.error().message, HasSubstr("http://h:9090/api/v1/query_range"));
  EXPECT_THAT(bad.error().message, HasSubstr("HTTP 400"));
  EXPECT_THAT(bad.error().message, HasSubstr("bad_data"));
  EXPECT_THAT(bad.error().message, HasSubstr("exceeded maximum resolution of 11,000 points"));
  auto parse = decode_envelope(
      R"j({"status":"error","errorType":"bad_data","error":"invalid parameter \"query\": 1:5: parse error: unexpected end of input"})j",
      400, "q");
  ASSERT_FALSE(parse);
  EXPECT_THAT(parse.error().message, HasSubstr("parse error"));
}

TEST(ApiDecode, NonJsonAnswerIsNamed) {
  auto html = decode_envelope("<html><body>404 page not found</body></html>", 404, "u");
  ASSERT_FALSE(html);
  EXPECT_THAT(html.error().message, HasSubstr("HTTP 404"));
  EXPECT_THAT(html.error().message, HasSubstr("not JSON"));
  EXPECT_THAT(html.error().message, HasSubstr("404 page not found"));
  // A 2xx with JSON that is not the API's envelope.
  EXPECT_FALSE(decode_envelope(R"j({"hello":"world"})j", 200, "u"));
}

TEST(ApiDecode, BadSampleValues) {
  EXPECT_FALSE(decode_sample_value(nlohmann::json("abc")));
  EXPECT_FALSE(decode_sample_value(nlohmann::json("1.5x")));
  EXPECT_FALSE(decode_sample_value(nlohmann::json::array()));
  EXPECT_DOUBLE_EQ(*decode_sample_value(nlohmann::json(3.5)), 3.5);
  EXPECT_FALSE(decode_query_data(nlohmann::json::parse(
      R"j({"resultType":"matrix","result":[{"metric":{},"values":[[1,"x"]]}]})j")));
  EXPECT_FALSE(
      decode_query_data(nlohmann::json::parse(R"j({"resultType":"streams","result":[]})j")));
}

TEST(ApiDecode, SeriesLabelValuesMetadata) {
  auto series = decode_series_data(nlohmann::json::parse(
      R"j([{"__name__":"ckptscope_checkpoints_total","workload":"slurm-1","direction":"save","outcome":"ok","instance":"n1"}])j"));
  ASSERT_TRUE(series);
  ASSERT_EQ(series->size(), 1U);
  EXPECT_EQ((*series)[0].at("workload"), "slurm-1");
  auto values = decode_label_values_data(nlohmann::json::parse(R"j(["n1","n2"])j"));
  ASSERT_TRUE(values);
  EXPECT_THAT(*values, ::testing::ElementsAre("n1", "n2"));
  auto types = decode_metadata_data(nlohmann::json::parse(
      R"j({"ckptscope_rpc_queue_seconds":[{"type":"histogram","help":"h","unit":""}],"node_mountstats_nfs_total_read_bytes_total":[{"type":"counter","help":"h","unit":""}]})j"));
  ASSERT_TRUE(types);
  EXPECT_EQ(types->at("ckptscope_rpc_queue_seconds"), "histogram");
  EXPECT_EQ(types->at("node_mountstats_nfs_total_read_bytes_total"), "counter");
}

}  // namespace
}  // namespace ckpt::fleet::api
