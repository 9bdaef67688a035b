#include "mfu/catalog.h"

#include <string>
#include <vector>

namespace mfu {

namespace {

// Merges each of `paths`, in order, into `table` (every database has the
// same AddFile).
template <typename Table>
Status AddFiles(const FileSystem& fs, const std::vector<std::string>& paths, Table& table) {
  for (const std::string& path : paths)
    MFU_RETURN_IF_ERROR(table.AddFile(fs, path));
  return Status::Ok();
}

}  // namespace

StatusOr<Catalog> Catalog::LoadBuiltin() {
  Catalog c;
  MFU_ASSIGN_OR_RETURN(c.hardware, HardwareDb::LoadBuiltin());
  MFU_ASSIGN_OR_RETURN(c.clusters, ClusterDb::LoadBuiltin());
  MFU_ASSIGN_OR_RETURN(c.efficiency, EfficiencyDb::LoadBuiltin());
  MFU_ASSIGN_OR_RETURN(c.frameworks, FrameworkDb::LoadBuiltin());
  MFU_ASSIGN_OR_RETURN(c.kernel_classes, KernelClassifier::LoadBuiltin());
  return c;
}

StatusOr<EfficiencyDb> Catalog::LoadEfficiency(const FileSystem& fs, const std::vector<std::string>& files,
                                               EfficiencyBase base) {
  MFU_ASSIGN_OR_RETURN(EfficiencyDb db, base == EfficiencyBase::kKernelGrounded ? EfficiencyDb::LoadBuiltinPrior()
                                                                                : EfficiencyDb::LoadBuiltin());
  MFU_RETURN_IF_ERROR(AddFiles(fs, files, db));
  return db;
}

StatusOr<Catalog> Catalog::Load(const FileSystem& fs, const CatalogFiles& files) {
  MFU_ASSIGN_OR_RETURN(Catalog c, LoadBuiltin());
  MFU_RETURN_IF_ERROR(AddFiles(fs, files.hardware, c.hardware));
  MFU_RETURN_IF_ERROR(AddFiles(fs, files.clusters, c.clusters));
  if (files.efficiency_base != EfficiencyBase::kFitted || !files.efficiency.empty()) {
    MFU_ASSIGN_OR_RETURN(c.efficiency, LoadEfficiency(fs, files.efficiency, files.efficiency_base));
  }
  MFU_RETURN_IF_ERROR(AddFiles(fs, files.frameworks, c.frameworks));
  MFU_RETURN_IF_ERROR(AddFiles(fs, files.kernel_classes, c.kernel_classes));
  return c;
}

}  // namespace mfu
