// JsonToCsv and ParseReportFormat (mfu/reporter.h): a result's CSV is its
// JSON flattened, checked here on hand-written documents.

#include "mfu/reporter.h"

#include <gtest/gtest.h>

namespace mfu {
namespace {

TEST(JsonToCsv, OneRowOfEveryScalarLeafByDottedPath) {
  const char* doc = R"({"schema_version": 3, "mfu_version": "0.1.0", "model": {"name": "llama, 8b", "layers": 32},
                        "mfu": 0.5, "fits": true, "missing": null, "tags": ["a", "b"],
                        "notes": [{"kind": "warning", "message": "x"}], "quote": "say \"hi\""})";
  // Keys in the order the JSON writes them (sorted), nested ones dotted.
  EXPECT_EQ(JsonToCsv(doc, ""),
            "fits,mfu,missing,model.layers,model.name,quote,tags\n"
            "true,0.5,,32,\"llama, 8b\",\"say \"\"hi\"\"\",a;b\n");
}

TEST(JsonToCsv, RowsOfAListWithTheUnionOfTheirColumns) {
  const char* doc = R"({"top": [{"config": {"tp": 8}, "step_s": 1.25}, {"config": {"tp": 4, "pp": 2}}],
                        "search": {"evaluated": 100}})";
  EXPECT_EQ(JsonToCsv(doc, "/top"), "config.tp,step_s,config.pp\n8,1.25,\n4,,2\n");
  // A pointer the document lacks: the whole document as one row.
  EXPECT_EQ(JsonToCsv(doc, "/decode_sweep"), "search.evaluated\n100\n");
}

TEST(ReportFormat, NamesAndErrors) {
  EXPECT_EQ(*ParseReportFormat("csv"), ReportFormat::kCsv);
  EXPECT_EQ(*ParseReportFormat("json"), ReportFormat::kJson);
  EXPECT_STREQ(ReportFormatName(ReportFormat::kText), "text");
  StatusOr<ReportFormat> bad = ParseReportFormat("xml");
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.status().message(), "parameter 'output_format': 'xml' is not text, json or csv");
}

}  // namespace
}  // namespace mfu
