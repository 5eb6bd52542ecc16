// The depth simulator (verify/multistep/depth_simulator.hpp): to be written.
namespace icl::verify::multistep {}
