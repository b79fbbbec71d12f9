// NonMaxSuppression (opsets 10-11; unchanged since): greedy per batch and class selection of the
// highest-scoring boxes, dropping each box that overlaps an already selected one too much.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "core/dispatch.h"
#include "core/shape_util.h"
#include "providers/cpu/reference/op_util.h"
#include "runtime/kernel.h"

namespace polyinfer {
namespace {

struct Box {
  double y1, x1, y2, x2;  // corners with y1 <= y2 and x1 <= x2
  double area() const { return (y2 - y1) * (x2 - x1); }
};

double iou(const Box& a, const Box& b) {
  const double ih = std::min(a.y2, b.y2) - std::max(a.y1, b.y1);
  const double iw = std::min(a.x2, b.x2) - std::max(a.x1, b.x1);
  if (ih <= 0 || iw <= 0) return 0.0;
  const double inter = ih * iw;
  const double uni = a.area() + b.area() - inter;
  return uni > 0 ? inter / uni : 0.0;
}

class NonMaxSuppressionKernel final : public Kernel {
 public:
  explicit NonMaxSuppressionKernel(const KernelInfo& info)
      : center_point_box_(info.attr_int("center_point_box", 0)) {
    if (center_point_box_ != 0 && center_point_box_ != 1)
      info.unsupported("center_point_box=" + std::to_string(center_point_box_));
  }

  void run(KernelContext& ctx) override {
    const std::string label = ctx.node().label();
    const char* who = label.c_str();
    const Tensor& boxes_t = ctx.input(0);
    const Tensor& scores_t = ctx.input(1);
    PI_CHECK(boxes_t.rank() == 3 && boxes_t.dim(2) == 4, ShapeMismatch, who,
             ": boxes must be [batch, boxes, 4], got ", boxes_t.describe());
    PI_CHECK(scores_t.rank() == 3, ShapeMismatch, who,
             ": scores must be [batch, classes, boxes], got ", scores_t.describe());
    const int64_t nb = boxes_t.dim(0), nboxes = boxes_t.dim(1), nc = scores_t.dim(1);
    PI_CHECK(scores_t.dim(0) == nb && scores_t.dim(2) == nboxes, ShapeMismatch, who, ": scores ",
             scores_t.describe(), " do not match boxes ", boxes_t.describe());
    int64_t max_out = 0;
    if (ctx.has_input(2) && ctx.input(2).numel() > 0) {
      const std::vector<int64_t> v = read_int_list(ctx.input(2), who);
      PI_CHECK(v.size() == 1, InvalidArgument, who,
               ": max_output_boxes_per_class must be a single value");
      max_out = v[0];
    }
    double iou_threshold = 0.0;
    if (ctx.has_input(3) && ctx.input(3).numel() > 0)
      iou_threshold = read_scalar(ctx.input(3), who);
    PI_CHECK(iou_threshold >= 0 && iou_threshold <= 1, InvalidArgument, who,
             ": iou_threshold must be in [0, 1], got ", iou_threshold);
    bool has_score_threshold = ctx.has_input(4) && ctx.input(4).numel() > 0;
    double score_threshold = has_score_threshold ? read_scalar(ctx.input(4), who) : 0.0;

    const std::vector<double> bv = read_doubles(boxes_t, who);
    const std::vector<double> sv = read_doubles(scores_t, who);
    std::vector<Box> boxes(static_cast<size_t>(nb * nboxes));
    for (size_t i = 0; i < boxes.size(); ++i) {
      const double* c = &bv[4 * i];
      if (center_point_box_ == 0) {
        boxes[i] = {std::min(c[0], c[2]), std::min(c[1], c[3]), std::max(c[0], c[2]),
                    std::max(c[1], c[3])};
      } else {
        const double xc = c[0], yc = c[1], w = c[2], h = c[3];
        boxes[i] = {yc - h / 2, xc - w / 2, yc + h / 2, xc + w / 2};
      }
    }

    std::vector<int64_t> selected;  // triples (batch, class, box)
    if (max_out > 0) {
      std::vector<int64_t> order;
      std::vector<int64_t> kept;
      for (int64_t b = 0; b < nb; ++b) {
        for (int64_t c = 0; c < nc; ++c) {
          const double* s = &sv[static_cast<size_t>((b * nc + c) * nboxes)];
          order.clear();
          // A NaN score cannot be ranked, so it is never selected.
          for (int64_t i = 0; i < nboxes; ++i)
            if (!std::isnan(s[i]) && (!has_score_threshold || s[i] > score_threshold))
              order.push_back(i);
          // Highest score first; equal scores keep the lower box index first.
          std::stable_sort(order.begin(), order.end(),
                           [&](int64_t a, int64_t b2) { return s[a] > s[b2]; });
          kept.clear();
          for (int64_t i : order) {
            if (static_cast<int64_t>(kept.size()) >= max_out) break;
            const Box& cand = boxes[static_cast<size_t>(b * nboxes + i)];
            bool keep = true;
            for (int64_t k : kept) {
              if (iou(cand, boxes[static_cast<size_t>(b * nboxes + k)]) > iou_threshold) {
                keep = false;
                break;
              }
            }
            if (!keep) continue;
            kept.push_back(i);
            selected.insert(selected.end(), {b, c, i});
          }
        }
      }
    }
    const int64_t n = static_cast<int64_t>(selected.size() / 3);
    Tensor& y = ctx.output(0, DType::Int64, {n, 3});
    std::copy(selected.begin(), selected.end(), y.data<int64_t>());
  }

 private:
  int64_t center_point_box_;
};

}  // namespace

PI_CPU_KERNEL(NonMaxSuppression, 10, 28, NonMaxSuppressionKernel);

}  // namespace polyinfer
