// The test-time iteration's simulator (verify/multistep/cot_simulator.hpp): to be written.
namespace icl::verify::multistep {}
