#include "mfu/catalog.h"

namespace mfu {

StatusOr<Catalog> Catalog::LoadBuiltin() {
  Catalog c;
  MFU_ASSIGN_OR_RETURN(c.hardware, HardwareDb::LoadBuiltin());
  MFU_ASSIGN_OR_RETURN(c.clusters, ClusterDb::LoadBuiltin());
  MFU_ASSIGN_OR_RETURN(c.efficiency, EfficiencyDb::LoadBuiltin());
  MFU_ASSIGN_OR_RETURN(c.frameworks, FrameworkDb::LoadBuiltin());
  MFU_ASSIGN_OR_RETURN(c.kernel_classes, KernelClassifier::LoadBuiltin());
  return c;
}

StatusOr<Catalog> Catalog::Load(const FileSystem& fs, const CatalogFiles& files) {
  MFU_ASSIGN_OR_RETURN(Catalog c, LoadBuiltin());
  for (const std::string& path : files.hardware) {
    MFU_ASSIGN_OR_RETURN(std::string text, fs.ReadFile(path));
    MFU_RETURN_IF_ERROR(c.hardware.MergeCsv(text, path));
  }
  for (const std::string& path : files.clusters) {
    MFU_ASSIGN_OR_RETURN(std::string text, fs.ReadFile(path));
    MFU_RETURN_IF_ERROR(c.clusters.AddCsv(text, path));
  }
  for (const std::string& path : files.efficiency) {
    MFU_ASSIGN_OR_RETURN(std::string text, fs.ReadFile(path));
    MFU_RETURN_IF_ERROR(c.efficiency.AddCsv(text, path));
  }
  for (const std::string& path : files.frameworks) {
    MFU_ASSIGN_OR_RETURN(std::string text, fs.ReadFile(path));
    MFU_RETURN_IF_ERROR(c.frameworks.AddCsv(text, path));
  }
  for (const std::string& path : files.kernel_classes) {
    MFU_ASSIGN_OR_RETURN(std::string text, fs.ReadFile(path));
    MFU_RETURN_IF_ERROR(c.kernel_classes.AddRulesCsv(text, path));
  }
  return c;
}

}  // namespace mfu
