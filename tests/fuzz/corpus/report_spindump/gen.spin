Date/Time:        2026-11-20 10:00:00.000 +0000
End time:         2026-11-20 10:00:02.000 +0000
OS Version:       iPhone OS 17.2 (21C62)
Architecture:     arm64
Report Version:   35.1
Incident Identifier: 00000000-AAAA-4BBB-8CCC-F7C8202CC828

Command:          TKApp
PID:              400

Event:            hang
Duration:         2.00s
Steps:            20 (100ms sampling interval)

Process:          TKApp [400]
Path:             /private/var/containers/Bundle/Application/X/App.app/libtks-arm64.dylib
Architecture:     arm64
  Thread 0x100    DispatchQueue "com.apple.main-thread"(1)    5 samples (1-5)    priority 31 (base 31)
  5  ??? (libtks-arm64.dylib + 39900) [0x104a95bdc]
    5  ??? (libtks-arm64.dylib + 56756) [0x104a99db4]
      5  ??? (libtks-arm64.dylib + 21180) [0x104a912bc]
        5  ??? (libtks-arm64.dylib + 34572) [0x104a9470c]
          5  ??? (libtks-arm64.dylib + 9220) [0x104a8e404]
            5  ??? (libtks-arm64.dylib + 13480) [0x104a8f4a8]
              5  ??? (libtks-arm64.dylib + 56188) [0x104a99b7c]
                5  ??? (libtks-arm64.dylib + 20288) [0x104a90f40]
                  5  ??? (libtks-arm64.dylib + 45656) [0x104a97258]
                    5  ??? (libtks-arm64.dylib + 37532) [0x104a9529c]
                      5  ??? (libtks-arm64.dylib + 51348) [0x104a98894]
                        5  ??? (libtks-arm64.dylib + 28960) [0x104a93120]
                          5  ??? (libtks-arm64.dylib + 59052) [0x104a9a6ac]
                            5  ??? (libtks-arm64.dylib + 3304) [0x104a8cce8]
                              5  ??? (libtks-arm64.dylib + 40040) [0x104a95c68]
                                5  ??? (libtks-arm64.dylib + 46900) [0x104a97734]
                                  5  ??? (libtks-arm64.dylib + 29660) [0x104a933dc]
                                    5  ??? (libtks-arm64.dylib + 3156) [0x104a8cc54]
                                      5  ??? (libtks-arm64.dylib + 52988) [0x104a98efc]
                                        5  ??? (libtks-arm64.dylib + 51164) [0x104a987dc]
  Thread 0x101    6 samples (1-6)    priority 31 (base 31)
  6  ??? (libtks-arm64.dylib + 57724) [0x104a9a17c]
    6  ??? (libtks-arm64.dylib + 42936) [0x104a967b8]
      6  ??? (libtks-arm64.dylib + 31324) [0x104a93a5c]
        6  ??? (libtks-arm64.dylib + 28456) [0x104a92f28]
          6  ??? (libtks-arm64.dylib + 34376) [0x104a94648]
            6  ??? (libtks-arm64.dylib + 58316) [0x104a9a3cc]
              6  ??? (libtks-arm64.dylib + 29224) [0x104a93228]
                6  ??? (libtks-arm64.dylib + 35292) [0x104a949dc]
                  6  ??? (libtks-arm64.dylib + 26444) [0x104a9274c]
                    6  ??? (libtks-arm64.dylib + 31388) [0x104a93a9c]
                      6  ??? (libtks-arm64.dylib + 27804) [0x104a92c9c]
                        6  ??? (libtks-arm64.dylib + 2104) [0x104a8c838]
                          6  ??? (libsystem_0.dylib + 169904) [0x1810297b0]
                            6  ??? (libtks-arm64.dylib + 32056) [0x104a93d38]
                              6  ??? (libsystem_0.dylib + 97384) [0x181017c68]
                                6  ??? (libtks-arm64.dylib + 52316) [0x104a98c5c]
                                  6  ??? (libtks-arm64.dylib + 6964) [0x104a8db34]
                                    6  ??? (libtks-arm64.dylib + 37264) [0x104a95190]
                                      6  ??? (libtks-arm64.dylib + 28452) [0x104a92f24]
                                        6  ??? (libtks-arm64.dylib + 17204) [0x104a90334]
  Thread 0x102    7 samples (1-7)    priority 31 (base 31)
  7  ??? (libtks-arm64.dylib + 49628) [0x104a981dc]
    7  ??? (libtks-arm64.dylib + 44540) [0x104a96dfc]
      7  ??? (libtks-arm64.dylib + 27180) [0x104a92a2c]
        7  ??? (libtks-arm64.dylib + 15924) [0x104a8fe34]
          7  ??? (libtks-arm64.dylib + 36996) [0x104a95084]
            7  ??? (libtks-arm64.dylib + 30504) [0x104a93728]
              7  ??? (libtks-arm64.dylib + 3612) [0x104a8ce1c]
                7  ??? (libtks-arm64.dylib + 16068) [0x104a8fec4]
                  7  ??? (libtks-arm64.dylib + 40988) [0x104a9601c]
                    7  ??? (libtks-arm64.dylib + 18232) [0x104a90738]
                      7  ??? (libsystem_0.dylib + 101588) [0x181018cd4]
                        7  ??? (libtks-arm64.dylib + 32348) [0x104a93e5c]
                          7  ??? (libtks-arm64.dylib + 31096) [0x104a93978]
                            7  ??? (libtks-arm64.dylib + 44332) [0x104a96d2c]
                              7  ??? (libtks-arm64.dylib + 11760) [0x104a8edf0]
                                7  ??? (libtks-arm64.dylib + 23872) [0x104a91d40]
                                  7  ??? (libtks-arm64.dylib + 17652) [0x104a904f4]
                                    7  ??? (libtks-arm64.dylib + 2252) [0x104a8c8cc]
                                      7  ??? (libtks-arm64.dylib + 6752) [0x104a8da60]
                                        7  ??? (libsystem_0.dylib + 8764) [0x18100223c]

  Binary Images:
         0x104a8c000 -        0x104a9ece3  libtks-arm64.dylib  <4C4C4430-5555-3144-A158-50296743BBBA>  /private/var/containers/Bundle/Application/X/App.app/libtks-arm64.dylib
         0x181000000 -        0x18103ffff  libsystem_0.dylib  <2265B1F5-91B7-D8F1-CD61-1027C386BBC4>  /usr/lib/system/libsystem_0.dylib
