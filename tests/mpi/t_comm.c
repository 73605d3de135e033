#include "mt.h"
int main(int argc, char **argv) { mt_init(&argc, &argv); return mt_finish("x"); }
