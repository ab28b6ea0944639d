// Catch2 main for cuparity's unit and integration tests.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
