// The marker the harness looks up to label every result produced on this library as simulated.
#ifndef CUPARITY_SIM_MARKER
#define CUPARITY_SIM_MARKER "cuparity simdriver 1.0"
#endif

extern "C" __attribute__((visibility("default"))) const char cuparity_simulated_driver[] =
    CUPARITY_SIM_MARKER;
